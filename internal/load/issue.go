package load

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// phaseRun is one phase being issued: its budgets (requests, sessions), its
// in-flight requests and its counters.
type phaseRun struct {
	e        *Engine
	ph       *plan.Phase
	r        *PhaseReport
	n        int64
	issueCtx context.Context // ends when the phase must stop issuing
	phaseCtx context.Context // ends when in-flight requests are cut
	// durationEnd is the end of the phase's duration (clock ns; 0: none): no
	// send is due at or after it (pastEnd).
	durationEnd int64
	progress    *Progress

	inflight sync.WaitGroup // requests claimed and not yet returned
	branches sync.WaitGroup // sessions a Brancher started, running (branch.go)
	counts   branchCounts
	// branchCtx ends when the branches still waiting to send must stop:
	// with issueCtx, or once the phase's requests have drained
	// (stopBranches, from endBranches).
	branchCtx    context.Context
	stopBranches context.CancelFunc
	cancelled    atomic.Int64
	prefill      chan struct{} // the prefill cap's slots (nil: no cap)

	// starts orders the concurrency slots' session starts (begin).
	starts   sync.Mutex
	mu       sync.Mutex // guards the budgets and the report's counters
	requests int
	sessions int
	spanned  bool          // the report's schedule span holds a send (span)
	full     chan struct{} // closed when the request count is reached
	closed   bool          // the issuer returned: no claim succeeds any more
}

// close ends issuing for good: after it returns no claim succeeds, so the
// in-flight count can be waited for.
func (p *phaseRun) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// claim issues the credit of turn turn of session sid, scheduled at sched,
// unless the phase stopped issuing (its duration ended, though the
// deadline's timer has yet to fire) or its request count is reached.
func (p *phaseRun) claim(sched int64, sid, turn int) (Credit, bool) {
	issued := p.e.Clock.Now() // read before the lock every sender contends for
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.issueCtx.Err() != nil || p.pastEnd(issued) || p.ph.Requests > 0 && p.requests == p.ph.Requests {
		return Credit{}, false
	}
	// Counted in flight from the claim, before the phase can be seen to
	// stop issuing: every Add comes before the drain's Wait.
	p.inflight.Add(1)
	if p.requests++; p.requests == p.ph.Requests {
		close(p.full)
		p.stopBranches() // no branch waiting for its time can send any more
	}
	p.r.Sent++
	p.progress.Sent.Add(1)
	return Credit{Index: int(p.e.index.Add(1) - 1), Phase: p.ph, ScheduledNs: sched, Session: sid, Turn: turn,
		PhaseNum: p.requests - 1, IssuedNs: issued, SendBy: p.durationEnd}, true
}

// pastEnd says whether a send due at t (clock ns) falls at or after the end
// of the phase's duration, so is not sent, whichever timer fires first.
func (p *phaseRun) pastEnd(t int64) bool { return p.durationEnd > 0 && t >= p.durationEnd }

// startSession takes a session from the phase's budget and returns its
// number, or false when the phase may start no more sessions.
func (p *phaseRun) startSession() (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.sessionAllowed() {
		return 0, false
	}
	p.sessions++
	p.r.Sessions++
	return int(p.e.sessions.Add(1) - 1), true
}

// canStartSession says whether the phase may still start a session.
func (p *phaseRun) canStartSession() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessionAllowed()
}

// sessionAllowed is canStartSession with p.mu held.
func (p *phaseRun) sessionAllowed() bool {
	return !p.closed && p.issueCtx.Err() == nil && (p.ph.Requests == 0 || p.requests < p.ph.Requests) &&
		(p.ph.Sessions == 0 || p.sessions < p.ph.Sessions)
}

// emit hands a finished request's record on, marking a request cut by the
// phase's end as cancelled, by its grace period or by an interrupt (one
// aborted on purpose already is), and returns it so marked.
func (p *phaseRun) emit(rec metrics.Record) metrics.Record {
	if rec.Cancelled || rec.Error != nil && p.phaseCtx.Err() != nil {
		if !rec.Cancelled {
			rec.CutBy = metrics.CutInterrupt
			if errors.Is(context.Cause(p.phaseCtx), errGraceEnded) {
				rec.CutBy = metrics.CutGracePeriod
			}
		}
		rec.Cancelled = true
		p.cancelled.Add(1)
	} else if rec.Error != nil {
		p.progress.Errors.Add(1)
	}
	p.progress.Done.Add(1)
	if p.e.OnRecord != nil {
		p.e.OnRecord(rec)
	}
	return rec
}

// send sends turn turn of s under credit c (claimed, so counted in flight),
// once the prefill cap has a slot for it: until its first token, or its end.
// A credit claimed in time whose send comes at or after the end of the
// phase's duration (its sender fell behind, or it waited for the prefill
// cap) is not sent: false, with no record, counted as not sent
// (PhaseReport.NotSent), as AIPerf sends nothing once a duration ended.
func (p *phaseRun) send(s Session, turn int, c Credit) (metrics.Record, bool) {
	defer p.inflight.Done()
	c.ReceivedNs = p.e.Clock.Now()
	if p.prefill != nil {
		release := p.enterPrefill(&c)
		c.FirstToken = release
		defer release()
	}
	if p.pastEnd(p.e.Clock.Now()) { // before the request is built
		p.sent(c.ScheduledNs, false)
		return metrics.Record{}, false
	}
	rec := s.Send(p.phaseCtx, turn, c)
	if p.sent(c.ScheduledNs, !rec.NotSent); rec.NotSent {
		return rec, false
	}
	return p.emit(rec), true
}

// sent counts a claimed send scheduled at sched as gone out, in the
// schedule's span, or as not sent (ok false: the duration ended first).
func (p *phaseRun) sent(sched int64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.r
	if !ok {
		r.Sent--
		r.NotSent++
		p.progress.Sent.Add(-1)
		return
	}
	// The span, earliest to latest, of what went out: senders claim and
	// send in parallel, so the last send need not be the latest time.
	p.span(sched)
}

// span takes the time t of a send that went out, or that the in-flight cap
// skipped, into the schedule's span (under p.mu).
func (p *phaseRun) span(t int64) {
	r := p.r
	if !p.spanned {
		p.spanned = true
		r.FirstSchedNs, r.LastSchedNs = t, t
	}
	r.FirstSchedNs, r.LastSchedNs = min(r.FirstSchedNs, t), max(r.LastSchedNs, t)
}

// due is when turn i ≥ 1 of s may be sent, turn i-1 having ended at endNs:
// its delay after that end, or its absolute time on the phase's schedule,
// or that end when it is later (gated: the turn waited for the reply, as
// open-loop replay does). A gated turn is scheduled at the reply's end:
// the wait is the server's, so the send lag keeps measuring the client.
func (p *phaseRun) due(s Session, i int, endNs int64) (sched int64, gated bool) {
	delay, at, abs := s.Due(i)
	if abs {
		sched = p.r.StartNs + p.scaled(at)
		return max(sched, endNs), endNs > sched
	}
	return endNs + int64(delay), false
}

// countGated counts a sent turn that waited for its previous reply past
// its absolute time.
func (p *phaseRun) countGated() {
	p.mu.Lock()
	p.r.ReplyGated++
	p.mu.Unlock()
}

// scaled divides a schedule offset by the phase's replay speed-up.
func (p *phaseRun) scaled(at int64) int64 {
	if p.ph.Speedup > 0 {
		return int64(float64(at) / p.ph.Speedup)
	}
	return at
}

// continueSession sends the turns of s after the first, each once it is
// due, until the session ends or the phase stops issuing.
func (p *phaseRun) continueSession(s Session, sid int, last metrics.Record, timer *time.Timer) {
	for i := 1; i < s.Turns(); i++ {
		sched, gated := p.due(s, i, max(last.EndNs, last.SentNs))
		if !p.e.waitUntil(p.issueCtx, timer, sched) {
			return
		}
		c, ok := p.claim(sched, sid, i)
		if !ok {
			return
		}
		if gated {
			p.countGated()
		}
		if last, ok = p.send(s, i, c); !ok {
			return
		}
	}
}

// issueConcurrency keeps ph.Concurrency sessions going: each slot starts its
// next session the instant the previous one ends, and sends each turn the
// instant it is due. With one-turn sessions that is ph.Concurrency requests
// in flight. A concurrency ramp opens slot k only at slotOpens. It returns
// when no slot may start another session or send another turn.
func (p *phaseRun) issueConcurrency() {
	var slots sync.WaitGroup
	// opening ends with the issuer: a slot the ramp has not opened by then
	// never will.
	opening, stop := context.WithCancel(p.issueCtx)
	defer stop()
	for k := range p.ph.Concurrency {
		slots.Go(func() {
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			if at := plan.SlotOpens(k, p.ph.Concurrency, p.ph.ConcurrencyRamp); at > 0 && !p.e.waitUntil(opening, timer, p.r.StartNs+at) {
				return
			}
			for {
				s, sid, c, ok := p.begin()
				if !ok {
					return
				}
				if b, ok := s.(Brancher); ok {
					p.runTree(b, sid)
					continue
				}
				if rec, ok := p.send(s, 0, c); ok {
					p.continueSession(s, sid, rec, timer)
				}
			}
		})
	}
	stopped := make(chan struct{})
	go func() { slots.Wait(); p.branches.Wait(); close(stopped) }()
	select {
	case <-p.full:
	case <-p.issueCtx.Done():
	case <-stopped:
	}
}

// begin starts a concurrency slot's next session: its number, its
// conversation (the source's next) and, unless it is a Brancher, the
// credit of its first turn, as one step among the slots. Apart, every slot
// could start a session while none had claimed yet, so more conversations
// were drawn than the count had requests for, and the ones sent were those
// whose slots claimed first: with --request-count 2 at concurrency 8 over
// two entries, one entry twice (the next pass's first) and the other never.
func (p *phaseRun) begin() (s Session, sid int, c Credit, ok bool) {
	p.starts.Lock()
	defer p.starts.Unlock()
	if sid, ok = p.startSession(); !ok {
		return nil, 0, Credit{}, false
	}
	s = p.e.Source.Next()
	if _, tree := s.(Brancher); tree {
		return s, sid, Credit{}, true
	}
	c, ok = p.claim(p.e.Clock.Now(), sid, 0)
	return s, sid, c, ok
}

// issueRate sends on an absolute open-loop schedule from one start: at each
// scheduled time a session's next turn that is due goes first, else a new
// session starts. A late send fires at once and keeps its scheduled time
// (the lag is recorded). With a cap, at most ph.Concurrency sessions run at
// once: a new session whose time comes while the cap is full is dropped
// (AIPerf's policy, counted as cap-skipped) or, under CapDelay, waits for
// a free slot (counted as cap-delayed).
// It returns when the count is sent, the sessions are done, or the phase's
// issuing context ends; once the next send falls past the duration it waits
// for that end.
func (p *phaseRun) issueRate() {
	sched := NewSchedule(*p.ph, p.e.Seed+p.n)
	q := newTurnQueue(p.ph.Concurrency, p.ph.ConcurrencyRamp)
	start := p.r.StartNs
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		target := start + sched.Next()
		if p.pastEnd(target) {
			<-p.issueCtx.Done()
			return
		}
		if !p.e.waitUntil(p.issueCtx, timer, target) {
			return
		}
		w, skipped, ok := q.pick(p, target)
		if !ok {
			p.waitBranches() // a tree's branches may still start turns
			return
		}
		if skipped {
			continue
		}
		if b, ok := w.s.(Brancher); ok && w.turn == 0 {
			p.branches.Add(1) // counted before it claims anything
			go p.startQueued(q, w, b)
			continue
		}
		c, ok := p.claim(w.sched, w.sid, w.turn)
		if !ok {
			q.end()
			return
		}
		go p.sendQueued(q, w, c)
		if p.e.Precise {
			// The new goroutine waits in this P's run queue; yield so it
			// starts now instead of when another P steals it (~150 µs).
			runtime.Gosched()
		}
	}
}

// fixedLookahead is how many sessions of a fixed schedule are prepared
// (their conversation read, their first request built) ahead of their time,
// so that a burst of sends at one timestamp leaves on time.
const fixedLookahead = 256

// issueFixed replays the engine's fixed schedule: each conversation's first
// turn at its time from the phase start (divided by the speed-up), later
// turns at their own time or their delay after the previous reply. Sessions
// are made (Source.Fixed) ahead of their time by a prefetching goroutine.
// With a cap, at most ph.Concurrency sessions run at once (cap-delayed sends
// are counted). It returns when every scheduled session has sent its last
// turn, the count is sent, or the phase's issuing context ends.
func (p *phaseRun) issueFixed() {
	type start struct {
		s  Session
		at int64
	}
	ahead := make(chan start, fixedLookahead)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(ahead)
		if p.e.Fixed == nil {
			return
		}
		for conv, at := range p.e.Fixed {
			select {
			case ahead <- start{s: p.e.Source.Fixed(conv), at: at}:
			case <-stop:
				return
			}
		}
	}()
	var slots chan struct{}
	if p.ph.Concurrency > 0 {
		slots = make(chan struct{}, p.ph.Concurrency)
	}
	var sessions sync.WaitGroup
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for st := range ahead {
		target := p.r.StartNs + p.scaled(st.at)
		if !p.e.waitUntil(p.issueCtx, timer, target) || !p.takeSlot(slots) {
			break
		}
		sid, ok := p.startSession()
		if !ok {
			releaseSlot(slots)
			break
		}
		c, ok := p.claim(target, sid, 0)
		if !ok {
			releaseSlot(slots)
			break
		}
		sessions.Go(func() {
			defer releaseSlot(slots)
			t := time.NewTimer(time.Hour)
			defer t.Stop()
			if rec, ok := p.send(st.s, 0, c); ok {
				p.continueSession(st.s, sid, rec, t)
			}
		})
	}
	sessions.Wait()
}

// takeSlot takes one of the cap's slots (nil: no cap), counting a send
// that had to wait for one; false when the phase stopped issuing first.
func (p *phaseRun) takeSlot(slots chan struct{}) bool {
	if slots == nil {
		return true
	}
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	p.mu.Lock()
	p.r.CapDelayed++
	p.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return true
	case <-p.issueCtx.Done():
		return false
	}
}

func releaseSlot(slots chan struct{}) {
	if slots != nil {
		<-slots
	}
}

// enterPrefill takes a slot of the prefill cap for c and returns its
// release (idempotent). A send that waits for one is counted as delayed
// by a cap; in concurrency mode its schedule becomes the moment it got the
// slot, so the send lag keeps measuring the client. Cut by the phase's end
// while waiting, it goes on and fails at once as cut.
func (p *phaseRun) enterPrefill(c *Credit) func() {
	select {
	case p.prefill <- struct{}{}:
	default:
		p.mu.Lock()
		p.r.CapDelayed++
		p.mu.Unlock()
		select {
		case p.prefill <- struct{}{}:
		case <-p.phaseCtx.Done():
			return func() {}
		}
		if p.ph.Rate == 0 && !p.ph.Fixed {
			c.ScheduledNs = p.e.Clock.Now()
		}
	}
	var once sync.Once
	return func() { once.Do(func() { <-p.prefill }) }
}
