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
	return addDelay(m.itl, addDelay(mulDelay(n, m.perSeq), mulDelay(osl, m.perOSL)))
}

// firstStep is the time of a request's first prefill step: --ttft plus
// the prefill of all its uncached tokens. The model charges every chunk's
// tokens here; only the further chunks' step times come later.
func (m *latencyModel) firstStep(uncached int) time.Duration {
	return addDelay(m.ttft, mulDelay(uncached, m.prefill))
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

// scaled returns d times the trial scale s (d itself at scale 1), at most
// maxDelay.
func scaled(d time.Duration, s float64) time.Duration {
	if s == 1 {
		return d
	}
	return floatDuration(float64(d) * s)
}

// maxDelay is the longest duration the mock computes: a step, a prefill, a
// scheduled wait. Its latency flags are at most an hour each (config.go),
// but multiplied by a count (tokens, running sequences, pixels, frames)
// they could overflow; their products and sums saturate here instead,
// about eleven years, which no client waits for, and which the timing
// statistics can sum thousands of times before they saturate.
const maxDelay = 100_000 * time.Hour

// mulDelay returns n × d (n, d ≥ 0), at most maxDelay.
func mulDelay(n int, d time.Duration) time.Duration {
	if n <= 0 || d <= 0 {
		return 0
	}
	if d > maxDelay/time.Duration(n) {
		return maxDelay
	}
	return min(time.Duration(n)*d, maxDelay)
}

// addDelay returns a + b (both in [0, maxDelay]), at most maxDelay.
func addDelay(a, b time.Duration) time.Duration {
	return min(a+b, maxDelay)
}

// floatDuration rounds ns nanoseconds to a duration in [0, maxDelay].
func floatDuration(ns float64) time.Duration {
	if !(ns > 0) { // NaN too
		return 0
	}
	return time.Duration(math.Round(min(ns, float64(maxDelay))))
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
