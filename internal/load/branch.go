package load

import (
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// Branch is a session that a turn of another session starts: one of
// AIPerf's DAG children (dag_jsonl's FORK and SPAWN branches).
type Branch struct {
	// Session is the branch's conversation. Its turn 0 is due Due(0)'s
	// delay after the branch starts.
	Session Session
	// JoinAt is the starting session's turn that waits until this branch's
	// own last turn returned (0: none waits, as for a background fork).
	JoinAt int
}

// Brancher is a Session whose turns start other sessions. As in AIPerf,
// the sessions it starts (and theirs) take no session slot, rate tick or
// session budget of their own (each turn goes once due), and the slot the
// Brancher took is free again once its own last turn returned, so at a
// fork the requests in flight can exceed the concurrency. They count
// against the request count and stop with the phase's issuing; the phase
// stops issuing only once they ended.
type Brancher interface {
	Session
	// Branches lists the sessions to start once turn i returned as rec;
	// i = -1 asks for those to start before turn 0 (pre-session spawns).
	// It is called from the goroutine that sent the turn.
	Branches(i int, rec metrics.Record) []Branch
	// Silent reports that turn i sends no request (a turn of AIPerf's
	// orchestrator conversations, a round of fan-out): it takes no credit,
	// is due its delay after the branches it joins have ended (turn 0: after
	// the session started), and then starts its branches.
	Silent(i int) bool
}

// branchCounts is a phase's metrics.BranchStats as they are counted.
type branchCounts struct {
	mu sync.Mutex
	s  metrics.BranchStats
}

func (b *branchCounts) add(f func(*metrics.BranchStats)) {
	b.mu.Lock()
	f(&b.s)
	b.mu.Unlock()
}

// startQueued starts rate mode's Brancher session w on its tick, off the
// issuer's goroutine (reading its conversation may take a while): an
// orchestrator runs its rounds as they come due, any other sends its turns
// through the queue (sendQueued). The caller counted it among the
// branches.
func (p *phaseRun) startQueued(q *turnQueue, w turnWork, b Brancher) {
	defer p.branches.Done()
	if b.Silent(0) {
		p.runNode(b, w.sid, w.sched, true)
		q.end()
		return
	}
	c, ok := p.claim(w.sched, w.sid, 0)
	if !ok {
		q.end()
		return
	}
	p.sendQueued(q, w, c)
}

// sendQueued sends rate mode's turn w under c and queues the session's
// next turn once due, or ends the session. A Brancher's turns start their
// branches, and a turn that joins some waits until they ended: then, as
// AIPerf dispatches a joined turn, it is sent at once, off the ticks.
func (p *phaseRun) sendQueued(q *turnQueue, w turnWork, c Credit) {
	b, _ := w.s.(Brancher)
	if b != nil && w.turn > 0 { // counted before its credit returns: the drain waits for the branches it starts
		p.branches.Add(1)
		defer p.branches.Done()
	}
	if b != nil && w.turn == 0 {
		w.gates = map[int][]<-chan struct{}{}
		p.branch(b, -1, metrics.Record{}, w.gates)
	}
	for {
		rec, ok := p.send(w.s, w.turn, c)
		if !ok {
			q.end()
			return
		}
		p.branch(b, w.turn, rec, w.gates)
		w.turn++
		if w.turn >= w.s.Turns() {
			q.end()
			return
		}
		waited, ok := p.join(w.gates[w.turn])
		if !ok {
			q.end()
			return
		}
		if !waited {
			due, _ := p.due(w.s, w.turn, max(rec.EndNs, rec.SentNs)) // its send is on the rate grid: pick schedules it
			q.later(w, due, p.e.Clock)
			return
		}
		if c, ok = p.claim(p.e.Clock.Now(), w.sid, w.turn); !ok {
			q.end()
			return
		}
	}
}

// runTree sends the turns of root b, its turn 0 at once (a silent one
// once its delay has passed), starting the sessions its turns ask for on
// goroutines of their own; it returns once b's own last turn returned.
func (p *phaseRun) runTree(b Brancher, sid int) {
	// Counted before its first credit returns: once the phase's requests
	// have drained, every branch a root could start is counted already.
	p.branches.Add(1)
	defer p.branches.Done()
	p.runNode(b, sid, p.e.Clock.Now(), true)
}

// waitBranches returns once every branch the phase started has ended, or
// the phase stopped issuing.
func (p *phaseRun) waitBranches() {
	done := make(chan struct{})
	go func() { p.branches.Wait(); close(done) }()
	select {
	case <-done:
	case <-p.issueCtx.Done():
	}
}

// runNode sends the turns of s in order, each once the branches it joins
// have ended and its time has come, and starts the branches each turn asks
// for; a root's turn 0 is due at once (startNs), a branch's its delay after
// startNs. It returns when the session ends or the phase stops issuing:
// sent says whether its last turn was sent and not cut (by the grace
// period or an interrupt), failed whether that turn failed.
func (p *phaseRun) runNode(s Session, sid int, startNs int64, root bool) (sent, failed bool) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	b, _ := s.(Brancher)
	gates := map[int][]<-chan struct{}{}
	var last metrics.Record
	for i := 0; i < s.Turns(); i++ { // known once turn 0 is sent (a lazily read conversation)
		silent := b != nil && b.Silent(i)
		sched, ok := p.dueAt(s, i, gates[i], startNs, last, silent, root && i == 0, timer)
		if !ok {
			return false, false
		}
		var c Credit
		if !silent {
			if c, ok = p.claim(sched, sid, i); !ok {
				return false, false
			}
		}
		if i == 0 { // the pre-session spawns, once turn 0 holds its credit
			p.branch(b, -1, metrics.Record{}, gates)
		}
		if silent {
			last = metrics.Record{SentNs: sched, EndNs: sched}
		} else if last, ok = p.send(s, i, c); !ok {
			return false, false
		}
		p.branch(b, i, last, gates)
	}
	return !last.Cancelled, last.Error != nil
}

// dueAt waits until turn i of s is due, and returns that time. A turn that
// had to wait for the branches it joins is due at once, as AIPerf
// dispatches a joined turn, but a silent one (an orchestrator's round)
// its delay after they ended; else a root's turn 0 at once (at) and a
// branch's its delay after it started, a later turn its delay after the
// previous one returned.
func (p *phaseRun) dueAt(s Session, i int, joins []<-chan struct{}, startNs int64, last metrics.Record, silent, at bool,
	timer *time.Timer) (int64, bool) {
	waited, ok := p.join(joins)
	if !ok {
		return 0, false
	}
	delay := func() int64 { d, _, _ := s.Due(i); return int64(d) }
	var sched int64
	switch {
	case silent && i == 0:
		sched = startNs + delay()
	case silent:
		sched = max(p.e.Clock.Now(), last.EndNs) + delay()
	case waited, at:
		sched = p.e.Clock.Now()
	case i == 0:
		if d := delay(); d > 0 {
			p.counts.add(func(s *metrics.BranchStats) { s.ChildrenDelayed++ })
			sched = startNs + d
		} else {
			sched = startNs
		}
	default:
		sched, _ = p.due(s, i, max(last.EndNs, last.SentNs)) // a DAG's turns have no timestamps: never gated
	}
	if !p.e.waitUntil(p.branchCtx, timer, sched) {
		return 0, false
	}
	return sched, true
}

// join waits until the branches a turn joins have ended (ok false when
// the phase stopped issuing first), counting a turn that had to wait.
func (p *phaseRun) join(joins []<-chan struct{}) (waited, ok bool) {
	for _, done := range joins {
		select {
		case <-done:
			continue
		default:
		}
		if !waited {
			waited = true
			p.counts.add(func(s *metrics.BranchStats) { s.ParentsSuspended++ })
		}
		select {
		case <-done:
		case <-p.branchCtx.Done():
			return waited, false
		}
	}
	if waited {
		p.counts.add(func(s *metrics.BranchStats) { s.ParentsResumed++ })
	}
	return waited, true
}

// branch starts the branches turn i of b asks for, each a session
// numbered in the run's sequence, and records which of b's turns wait for
// them in gates.
func (p *phaseRun) branch(b Brancher, i int, rec metrics.Record, gates map[int][]<-chan struct{}) {
	if b == nil || rec.Cancelled { // a turn cut before it ended starts nothing
		return
	}
	for _, br := range b.Branches(i, rec) {
		done := make(chan struct{})
		if br.JoinAt > 0 {
			gates[br.JoinAt] = append(gates[br.JoinAt], done)
		}
		sid := int(p.e.sessions.Add(1) - 1)
		start := p.e.Clock.Now()
		p.counts.add(func(s *metrics.BranchStats) { s.ChildrenSpawned++ })
		p.branches.Go(func() {
			defer close(done)
			sent, failed := p.runNode(br.Session, sid, start, false)
			p.counts.add(func(s *metrics.BranchStats) {
				switch {
				case !sent:
					s.ChildrenTruncated++
					if br.JoinAt > 0 {
						s.JoinsSuppressed++
					}
				case failed:
					s.ChildrenErrored++
				default:
					s.ChildrenCompleted++
				}
			})
		})
	}
}

// endBranches stops the branches still waiting to send, once the phase
// stopped issuing, and returns their counts once every branch has ended
// (nil when the phase started none).
func (p *phaseRun) endBranches() *metrics.BranchStats {
	p.stopBranches()
	p.branches.Wait()
	p.counts.mu.Lock()
	defer p.counts.mu.Unlock()
	if p.counts.s.ChildrenSpawned == 0 {
		return nil
	}
	s := p.counts.s
	return &s
}
