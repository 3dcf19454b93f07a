package load

import (
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// turnWork is a turn to send: turn turn of session s (number sid), due at
// dueNs.
type turnWork struct {
	s     Session
	sid   int
	turn  int
	dueNs int64
	sched int64 // the schedule time it is sent for
	// gates are a Brancher's turns waiting for its branches (branch.go).
	gates map[int][]<-chan struct{}
}

// turnQueue is rate mode's bookkeeping of sessions: the later turns of
// running sessions once they are due, and how many sessions run against
// the cap.
type turnQueue struct {
	mu     sync.Mutex
	due    []turnWork    // turns due, in the order they became due
	active int           // sessions started and not ended
	cap    int           // most sessions at once (0: no cap)
	notify chan struct{} // a turn became due or a session ended
	// ramp raises the cap from 1 over ramp seconds from the phase's start
	// (0: no ramp).
	ramp float64
}

func newTurnQueue(cap int, ramp float64) *turnQueue {
	return &turnQueue{cap: cap, ramp: ramp, notify: make(chan struct{}, 1)}
}

// pick chooses what to send at schedule time target: the oldest due turn,
// else the first turn of a new session. When the cap is full, no turn is
// due and a new session could still start, AIPerf's policy (CapSkip) drops
// the send: skipped, counted as cap-skipped. Otherwise, when neither is
// possible, it waits for a turn to become due, a cap slot to free up
// (counting a cap-delayed send, only while a new session could start) or
// every session to end. ok is false when there is nothing left to send or the
// phase stopped issuing.
func (q *turnQueue) pick(p *phaseRun, target int64) (w turnWork, skipped, ok bool) {
	delayed := false
	for {
		q.mu.Lock()
		if len(q.due) > 0 {
			w := q.due[0]
			q.due = q.due[1:]
			q.mu.Unlock()
			w.sched = max(target, w.dueNs)
			return w, false, true
		}
		limit, opens := q.cap, int64(-1)
		if q.ramp > 0 {
			limit, opens = rampedCap(q.cap, q.ramp, p.e.Clock.Now()-p.r.StartNs)
		}
		capFull := q.cap > 0 && q.active >= limit
		if !capFull {
			if sid, ok := p.startSession(); ok {
				q.active++
				q.mu.Unlock()
				// A send the cap delayed keeps its time on the grid: its
				// lag shows the wait, which the audit puts on the cap.
				return turnWork{s: p.e.Source.Next(), sid: sid, sched: target}, false, true
			}
			if q.active == 0 { // no session may start and none is running
				q.mu.Unlock()
				return turnWork{}, false, false
			}
		} else if !p.canStartSession() {
			// No new session may start (the count is sent, the sessions
			// are started): the cap holds back nothing, so the send is
			// neither skipped nor delayed; it waits for a running
			// session's next turn, or for every session to end.
			capFull = false
		}
		q.mu.Unlock()
		if capFull && p.ph.CapPolicy != plan.CapDelay {
			p.mu.Lock()
			p.r.CapSkipped++
			p.span(target) // the schedule's span takes in the sends it skipped
			p.mu.Unlock()
			return turnWork{}, true, true
		}
		if capFull && !delayed {
			delayed = true
			p.mu.Lock()
			p.r.CapDelayed++
			p.mu.Unlock()
		}
		var ramped *time.Timer // fires when the ramp opens another slot
		var opened <-chan time.Time
		if capFull && opens >= 0 {
			ramped = time.NewTimer(time.Duration(p.r.StartNs + opens - p.e.Clock.Now()))
			opened = ramped.C
		}
		select {
		case <-q.notify:
		case <-opened:
		case <-p.issueCtx.Done():
			return turnWork{}, false, false
		}
		if ramped != nil {
			ramped.Stop()
		}
	}
}

// later queues w once the clock reaches dueNs.
func (q *turnQueue) later(w turnWork, dueNs int64, clock Clock) {
	w.dueNs = dueNs
	if d := time.Duration(dueNs - clock.Now()); d > 0 {
		time.AfterFunc(d, func() { q.push(w) })
		return
	}
	q.push(w)
}

func (q *turnQueue) push(w turnWork) {
	q.mu.Lock()
	q.due = append(q.due, w)
	q.mu.Unlock()
	q.signal()
}

// end records that a session ended.
func (q *turnQueue) end() {
	q.mu.Lock()
	q.active--
	q.mu.Unlock()
	q.signal()
}

func (q *turnQueue) signal() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}
