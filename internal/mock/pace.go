package mock

import (
	"context"
	"time"
)

// pacer schedules a request's tokens by the latency model (model.go)
// against absolute targets, so lateness never accumulates: token 0 is due
// at its origin (the request's arrival, or the moment it got its
// generation slot if it had to wait for one) plus its prefill steps, and
// token k+1 one engine step after token k; a non-streaming reply with N
// tokens is due one step after its last token, at "token N". A step that
// depends on the batch (--itl-concurrency-lin-ms) is priced when it begins,
// by the requests generating then; the others are priced in advance. The
// process's clock releases each token when due. Every step is recorded, as
// scheduled, in the timing statistics when it is priced.
type pacer struct {
	s       *Server
	scale   float64   // the trial scale the request was admitted under
	osl     int       // the request's output tokens
	arrival time.Time // the request arrived
	due     time.Time // when token k is due
	k       int
	chunks  int           // prefill steps still to price before token 0, after the first
	planned bool          // token 0's prefill steps are all priced
	tick    chan struct{} // the clock's channel for this request, made on first use
}

// newPacer schedules a request admitted at origin: its first prefill step
// (--ttft and the prefill of its uncached tokens) from origin, and its
// further prefill chunks to come.
func (s *Server) newPacer(origin, arrival time.Time, uncached, osl int) pacer {
	scale, _ := s.currentScale()
	return pacer{s: s, scale: scale, osl: osl, arrival: arrival,
		due:    origin.Add(scaled(s.model.firstStep(uncached), scale)),
		chunks: s.model.chunks(uncached) - 1}
}

// paced reports whether the server's tokens wait at all (not under --fast
// or with every latency 0); only then is the process's clock started.
func (s *Server) paced() bool { return s.model.paced() }

// wait blocks until token k is due, pricing the steps before it: k is 0,
// the token after the last one waited for, or (non-streaming) the reply's
// end. It reports false if ctx ends first (the request must then not wait
// again).
func (p *pacer) wait(ctx context.Context, k int) bool {
	if !p.planned && !p.prefill(ctx) {
		return false
	}
	m := &p.s.model
	if p.k < k && !m.batched() { // every step alike: priced at once
		gap := scaled(m.step(0, p.osl), p.scale)
		p.s.timing.Load().schedGap.observeN(int64(gap), uint64(k-p.k))
		p.due = p.due.Add(mulDelay(k-p.k, gap))
		p.k = k
	}
	for p.k < k {
		if !p.sleep(ctx) { // step k begins when token k-1 is due
			return false
		}
		st := p.s.timing.Load() // before counting, so a cleared record holds only later counts
		n := p.s.sched.live()
		gap := scaled(m.step(n, p.osl), p.scale)
		st.steps.RLock()
		st.schedGap.observe(int64(gap))
		st.batch.observe(n)
		st.steps.RUnlock()
		p.due = p.due.Add(gap)
		p.k++
	}
	return p.sleep(ctx)
}

// prefill prices the prompt's further chunks, one engine step each, and
// records when token 0 is due.
func (p *pacer) prefill(ctx context.Context) bool {
	m := &p.s.model
	if !m.batched() {
		p.due = p.due.Add(mulDelay(p.chunks, scaled(m.step(0, p.osl), p.scale)))
		p.chunks = 0
	}
	for ; p.chunks > 0; p.chunks-- {
		if !p.sleep(ctx) { // the next chunk's step begins when the last one ends
			return false
		}
		st := p.s.timing.Load()
		n := p.s.sched.live()
		st.batch.observe(n)
		p.due = p.due.Add(scaled(m.step(n, p.osl), p.scale))
	}
	p.planned = true
	p.s.timing.Load().schedFirst.observe(int64(p.due.Sub(p.arrival)))
	return true
}

// sleep blocks until p.due; it reports false if ctx ends first.
func (p *pacer) sleep(ctx context.Context) bool {
	if !p.s.paced() {
		return true
	}
	if p.tick == nil {
		p.tick = make(chan struct{}, 1)
	}
	return sharedClock().wait(ctx, p.due, p.tick)
}
