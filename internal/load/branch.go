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

// sendQueued sends rate mode's turn w under c and queues the session's
// next turn once due, or ends the session. A Brancher's turns start their
// branches, and a turn that joins some waits until they ended: then, as
// AIPerf dispatches a joined turn, it is sent at once, off the ticks.
func (p *phaseRun) sendQueued(q *turnQueue, w turnWork, c Credit) {
	b, _ := w.s.(Brancher)
	if b != nil { // counted before its credit returns: the drain waits for the branches it starts
		p.branches.Add(1)
		defer p.branches.Done()
	}
	if b != nil && w.turn == 0 {
		w.gates = map[int][]<-chan struct{}{}
		p.branch(b, -1, metrics.Record{}, w.gates)
	}
	for {
		rec := p.send(w.s, w.turn, c)
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
			q.later(w, p.due(w.s, w.turn, max(rec.EndNs, rec.SentNs)), p.e.Clock)
			return
		}
		if c, ok = p.claim(p.e.Clock.Now(), w.sid, w.turn); !ok {
			q.end()
			return
		}
	}
}

// runTree sends the turns of b, the first claimed as c, starting the
// sessions its turns ask for on goroutines of their own; it returns once
// b's own last turn returned.
func (p *phaseRun) runTree(b Brancher, sid int, c Credit) {
	// Counted before its first credit returns: once the phase's requests
	// have drained, every branch a root could start is counted already.
	p.branches.Add(1)
	defer p.branches.Done()
	p.runNode(b, sid, &c, 0)
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

// runNode sends the turns of s in order (turn 0 under first when it was
// claimed already, else due from startNs), each once the branches it joins
// have ended and its time has come, and starts the branches each turn asks
// for. It returns when the session ends or the phase stops issuing: sent
// says whether its last turn was sent and not cut (by the grace period or
// an interrupt), failed whether that turn failed.
func (p *phaseRun) runNode(s Session, sid int, first *Credit, startNs int64) (sent, failed bool) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	b, _ := s.(Brancher)
	gates := map[int][]<-chan struct{}{}
	p.branch(b, -1, metrics.Record{}, gates)
	var last metrics.Record
	for i := 0; i < s.Turns(); i++ { // known once turn 0 is sent (a lazily read conversation)
		c, ok := Credit{}, true
		if i == 0 && first != nil {
			c = *first
		} else if c, ok = p.claimNode(s, sid, i, gates[i], startNs, last, timer); !ok {
			return false, false
		}
		last = p.send(s, i, c)
		p.branch(b, i, last, gates)
	}
	return !last.Cancelled, last.Error != nil
}

// claimNode waits until turn i of s is due and claims its credit. A turn
// that had to wait for the branches it joins is due at once, as AIPerf
// dispatches a joined turn; else its delay after the previous turn (after
// the branch started, for a branch's turn 0).
func (p *phaseRun) claimNode(s Session, sid, i int, joins []<-chan struct{}, startNs int64, last metrics.Record,
	timer *time.Timer) (Credit, bool) {
	waited, ok := p.join(joins)
	if !ok {
		return Credit{}, false
	}
	var sched int64
	switch {
	case waited:
		sched = p.e.Clock.Now()
	case i == 0:
		delay, _, _ := s.Due(0)
		if delay > 0 {
			p.counts.add(func(s *metrics.BranchStats) { s.ChildrenDelayed++ })
		}
		sched = startNs + int64(delay)
	default:
		sched = p.due(s, i, max(last.EndNs, last.SentNs))
	}
	if !p.e.waitUntil(p.branchCtx, timer, sched) {
		return Credit{}, false
	}
	return p.claim(sched, sid, i)
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
			sent, failed := p.runNode(br.Session, sid, nil, start)
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
