package mock

import "time"

// Steady is the latency model's steady state under a closed loop of
// identical streaming requests, each client sending its next request the
// moment its last one ends (docs/mock.md, "Steady state"): what a test
// needs to know the true time to first token, inter-token latency and
// throughput at a concurrency, and so the true SLA boundary and knee. It
// is at latency scale 1 (with --trial-jitter-cv every duration is
// multiplied by the trial's scale, which GET /mock/timing reports).
type Steady struct {
	// Batch is the number of requests generating: the concurrency, or
	// --max-num-seqs below it.
	Batch int
	// Step is an engine step at that batch, the inter-token latency:
	// itl + lin × Batch + perOSL × output.
	Step time.Duration
	// TTFT is the time to first token of a request that did not wait:
	// ttft + prefill × uncached + (chunks − 1) × Step.
	TTFT time.Duration
	// E2E is the time from a request's admission to its last token:
	// TTFT + (output − 1) × Step. It holds its generation slot that long.
	E2E time.Duration
	// Above --max-num-seqs the requests come back in waves, one E2E
	// apart: of every Batch admitted, a share LongShare waits LongWait and
	// the others ShortWait (LongWait = ShortWait + E2E, or the same when
	// LongShare is 1); MeanWait is their mean, by Little's law
	// (concurrency − Batch) / Batch × E2E. All zero at or below it.
	ShortWait, LongWait, MeanWait time.Duration
	LongShare                     float64
	// Throughput is the output tokens per second of all the clients:
	// concurrency × output / (E2E + MeanWait).
	Throughput float64
}

// Steady returns the latency model's steady state for concurrency clients
// sending prompts of uncached tokens for output tokens each (docs/mock.md).
// It is zero for a concurrency or output below 1.
func (c Config) Steady(concurrency, uncached, output int) Steady {
	if concurrency < 1 || output < 1 {
		return Steady{}
	}
	m := c.model()
	st := Steady{Batch: concurrency}
	if c.MaxNumSeqs > 0 {
		st.Batch = min(concurrency, c.MaxNumSeqs)
	}
	st.Step = m.step(st.Batch, output)
	st.TTFT = addDelay(m.firstStep(max(uncached, 0)), mulDelay(m.chunks(max(uncached, 0))-1, st.Step))
	st.E2E = addDelay(st.TTFT, mulDelay(output-1, st.Step))
	if q := concurrency - st.Batch; q > 0 {
		waves, rest := q/st.Batch, q%st.Batch
		st.ShortWait = mulDelay(waves, st.E2E)
		st.LongWait, st.LongShare = st.ShortWait, 1
		if rest > 0 {
			st.LongWait += st.E2E
			st.LongShare = float64(rest) / float64(st.Batch)
		}
		st.MeanWait = time.Duration(int64(q) * int64(st.E2E) / int64(st.Batch))
	}
	if cycle := st.E2E + st.MeanWait; cycle > 0 {
		st.Throughput = float64(concurrency*output) / cycle.Seconds()
	}
	return st
}
