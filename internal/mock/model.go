package mock

import (
	"math"
	"time"
)

// latencyModel is the mock's latency model, a per-sequence reading of vLLM's
// continuous batching (docs/mock.md has the formula): a request holds a
// generation slot (--max-num-seqs) from admission to its end; its prompt's
// uncached tokens are prefilled in chunks of at most the step budget
// (--max-num-batched-tokens), the first chunk costing --ttft and every
// further one an engine step; each output token after the first costs one
// engine step, whose time grows with the batch (the requests generating
// when the step begins) and with the request's output length. Every
// duration is multiplied by the trial scale (--trial-jitter-cv).
type latencyModel struct {
	ttft    time.Duration // --ttft: the first prefill step
	itl     time.Duration // --itl: an engine step's base time
	prefill time.Duration // --prefill-us-per-token: per uncached prompt token
	perSeq  time.Duration // --itl-concurrency-lin-ms: per running sequence, in every step
	perOSL  time.Duration // --itl-per-osl-token-ms: per output token of the request, in every step
	budget  int           // --max-num-batched-tokens: prompt tokens a step prefills; 0: no limit
}

// paced reports whether any token waits at all.
func (m *latencyModel) paced() bool {
	return m.ttft != 0 || m.itl != 0 || m.prefill != 0 || m.perSeq != 0 || m.perOSL != 0
}

// batched reports whether a step's time depends on the batch, so that the
// running requests must be counted when it begins.
func (m *latencyModel) batched() bool { return m.perSeq != 0 }

// step is the time of an engine step that begins with n requests
// generating, for a request of osl output tokens.
func (m *latencyModel) step(n, osl int) time.Duration {
	return m.itl + time.Duration(n)*m.perSeq + time.Duration(osl)*m.perOSL
}

// firstStep is the time of a request's first prefill step: --ttft plus
// the prefill of all its uncached tokens. The model charges every chunk's
// tokens here; only the further chunks' step times come later.
func (m *latencyModel) firstStep(uncached int) time.Duration {
	return m.ttft + time.Duration(uncached)*m.prefill
}

// chunks is the number of engine steps that prefill a prompt with this
// many uncached tokens: one without a budget (or a prompt within it), else
// ⌈uncached / budget⌉ (a prompt served wholly from the cache still takes
// its one step, as vLLM recomputes its last token).
func (m *latencyModel) chunks(uncached int) int {
	if m.budget == 0 || uncached <= m.budget {
		return 1
	}
	return (uncached + m.budget - 1) / m.budget
}

// scaled returns d times the trial scale s (d itself at scale 1).
func scaled(d time.Duration, s float64) time.Duration {
	if s == 1 {
		return d
	}
	return time.Duration(math.Round(float64(d) * s))
}

// trialScale draws the latency scale of a new trial: 1 without
// --trial-jitter-cv, else a lognormal draw of mean 1 and that coefficient
// of variation (σ² = ln(1 + cv²), μ = −σ²/2), the next from the seeded
// sequence of --random-seed.
func (s *Server) trialScale() float64 {
	cv := s.cfg.TrialJitterCV
	if cv == 0 {
		return 1
	}
	sigma2 := math.Log1p(cv * cv)
	s.rngMu.Lock()
	z := s.trialRng.NormFloat64()
	s.rngMu.Unlock()
	return math.Exp(math.Sqrt(sigma2)*z - sigma2/2)
}

// newTrial starts a trial: it draws the latency scale that requests
// admitted from now on keep for their whole life. New calls it once, and
// every reset call the mock answers (not a fault) again.
func (s *Server) newTrial() {
	s.trialMu.Lock()
	defer s.trialMu.Unlock()
	s.scale = s.trialScale()
	s.trials++
}

// currentScale returns the latency scale of the trial in progress and
// how many trials have begun.
func (s *Server) currentScale() (scale float64, trials int) {
	s.trialMu.Lock()
	defer s.trialMu.Unlock()
	return s.scale, s.trials
}
