package bench

import "sync"

// prefetchAhead is how many sessions of a file dataset are prepared before
// they are needed, and prefetchBytes how much text they may hold in all
// (a long agentic session's prompts are tens of megabytes): past it the
// prefetcher waits until the engine takes one (one session is prepared
// whatever its size).
const prefetchAhead = 64

var prefetchBytes = 64 << 20 // a variable for the test of the budget

// prefetch starts preparing the sampler's next conversations ahead of the
// engine: reading a trace's conversation and building its prompt are off
// the path between a request's schedule and its send. Stop ends it.
func (s *source) prefetch() {
	s.ahead, s.stop = make(chan *session, prefetchAhead), make(chan struct{})
	s.room = newRoom(s)
	go func() {
		for {
			sess := &session{src: s, conv: s.sampler.Next()}
			sess.prepare()
			if sess.bytes = sess.size(); !s.hold(sess.bytes) {
				return
			}
			select {
			case s.ahead <- sess:
			case <-s.stop:
				return
			}
		}
	}()
}

// newRoom is the condition of s's prefetch budget.
func newRoom(s *source) *sync.Cond { return sync.NewCond(&s.heldMu) }

// hold waits until n more bytes of prepared text fit the prefetch budget
// (or nothing is held), and holds them; false once Stop was called.
func (s *source) hold(n int) bool {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	for s.held > 0 && s.held+n > prefetchBytes && !s.stopped {
		s.waiting = true
		s.room.Wait()
		s.waiting = false
	}
	s.held += n
	return !s.stopped
}

// prefetched is the next prepared session.
func (s *source) prefetched() *session {
	sess := <-s.ahead
	s.heldMu.Lock()
	s.held -= sess.bytes
	s.heldMu.Unlock()
	s.room.Signal()
	return sess
}

// Stop ends the prefetcher, if any.
func (s *source) Stop() {
	if s.stop != nil {
		close(s.stop)
		s.heldMu.Lock()
		s.stopped = true
		s.heldMu.Unlock()
		s.room.Broadcast()
	}
}

// size is the text of the session's prepared conversation and first
// request's body, in bytes.
func (s *session) size() int {
	n := len(s.c.System) + len(s.c.Context)
	if s.first != nil {
		n += len(s.first.Body)
	}
	for i := range s.c.Turns {
		n += len(s.c.Turns[i].Text) + len(s.c.Turns[i].Messages) + len(s.c.Turns[i].Payload)
	}
	return n
}
