package mock

import (
	"context"
	"time"
)

// pacer schedules a request's output tokens against absolute targets, so
// lateness never accumulates: token k is due at start + ttft + k×itl, and a
// non-streaming reply with n tokens at start + ttft + n×itl. start is the
// request's arrival, or the moment it got its generation slot if it had to
// wait for one (--max-num-seqs); Server.admit adds the request's prefill
// time to ttft. The process's clock releases each token when due.
type pacer struct {
	start     time.Time
	ttft, itl time.Duration
	tick      chan struct{} // the clock's channel for this request, made on first use
}

// paced reports whether the server's tokens wait at all (not under --fast
// or with every latency 0); only then is the process's clock started.
func (s *Server) paced() bool {
	return s.ttft != 0 || s.itl != 0 || s.prefillPerToken != 0
}

// paced reports whether the request's tokens wait at all.
func (p *pacer) paced() bool { return p.ttft != 0 || p.itl != 0 }

// due returns when token k is due.
func (p *pacer) due(k int) time.Time {
	return p.start.Add(p.ttft + time.Duration(k)*p.itl)
}

// wait blocks until token k is due; it reports false if ctx ends first
// (the request must then not wait again).
func (p *pacer) wait(ctx context.Context, k int) bool {
	if !p.paced() {
		return true
	}
	if p.tick == nil {
		p.tick = make(chan struct{}, 1)
	}
	return sharedClock().wait(ctx, p.due(k), p.tick)
}
