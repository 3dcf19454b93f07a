package mock

import (
	"net/http"
	"sync"
	"time"
)

// timingStats is what the mock scheduled since it started or was last
// cleared, and how well it kept that schedule on streaming replies, in
// lock-free histograms: the schedule's as each step is priced, the
// others as each token chunk is flushed.
type timingStats struct {
	since    time.Time
	first    logHist // request arrival to the flush of its first token chunk
	gap      logHist // between the flushes of consecutive token chunks of a reply
	lateness logHist // a token chunk's flush minus the time it was due
	release  logHist // the handler resuming to write a token chunk minus the time it was due

	schedFirst logHist    // arrival to the time token 0 was due
	schedGap   logHist    // between the due times of consecutive tokens (a reply's end included)
	queue      logHist    // arrival to the generation slot, as scheduled (0 when the request did not wait)
	batch      countStats // requests generating when each batch-priced step began
	// steps is held shared while a step records itself in schedGap and
	// batch, and exclusively while Timing reads the two, so a snapshot
	// taken under load counts every step in both or in neither.
	steps sync.RWMutex
}

// Timing is what GET /mock/timing serves: the configured latencies, how
// the mock paces tokens, what its latency model scheduled and how its
// streaming replies actually went out, since it started or since
// POST /mock/timing/clear. Times are read just after each token chunk is
// flushed to the connection, so they include the write but not the
// network or the client.
type Timing struct {
	TTFTMS            float64 `json:"ttft_ms"`
	ITLMS             float64 `json:"itl_ms"`
	PrefillUSPerToken float64 `json:"prefill_us_per_token"`
	// Clock is how tokens are paced: "thread" (the process's timing
	// thread, timer slack 1 ns), "thread (timer slack not set: …)",
	// "go-timer" (off Linux) or "none" (--fast, or every latency 0).
	Clock string `json:"clock"`
	// WindowS is the seconds the statistics cover.
	WindowS float64 `json:"window_s"`
	// FirstChunk is each reply's first token chunk flush, from the
	// request's arrival: its time to first token as written.
	FirstChunk histStats `json:"first_chunk"`
	// Gap is the time between consecutive token chunk flushes of a reply:
	// its inter-token latency as written.
	Gap histStats `json:"gap"`
	// Lateness is each token chunk's flush minus the time it was due
	// (never negative, as no chunk goes out early; under --fast every
	// token is due on arrival).
	Lateness histStats `json:"lateness"`
	// Release is the part of Lateness before the write: when the handler
	// resumed to write the chunk, minus the time it was due (the clock's
	// lateness plus the Go scheduler's). Lateness minus Release is the
	// time the write and flush took.
	Release histStats `json:"release"`

	// Schedule is what the latency model scheduled (docs/mock.md), for
	// every inference request, streaming or not.
	Schedule Schedule `json:"schedule"`
}

// Schedule is the latency model's configuration and what it scheduled:
// exact durations computed by the mock, not measured (count, sum, min and
// max are exact; the quantiles are bucket estimates).
type Schedule struct {
	ITLConcurrencyLinMS float64 `json:"itl_concurrency_lin_ms"`
	ITLPerOSLTokenMS    float64 `json:"itl_per_osl_token_ms"`
	MaxNumSeqs          int     `json:"max_num_seqs"`
	MaxNumBatchedTokens int     `json:"max_num_batched_tokens"`
	TrialJitterCV       float64 `json:"trial_jitter_cv"`
	// LatencyScale multiplies every latency of the requests admitted in
	// the trial in progress; Trials counts the trials begun (1 at start,
	// one more per reset call answered).
	LatencyScale float64 `json:"latency_scale"`
	Trials       int     `json:"trials"`
	// First is each request's first token due time after its arrival:
	// its time to first token as scheduled, queue wait included.
	First histStats `json:"first"`
	// Gap is each step between a request's consecutive token due times
	// (a non-streaming reply's end counts as one more token): its
	// inter-token latency as scheduled.
	Gap histStats `json:"gap"`
	// QueueWait is each request's wait for a generation slot, from its
	// arrival (0 when it got one at once).
	QueueWait histStats `json:"queue_wait"`
	// Batch is the number of requests generating when each step priced by
	// the batch began (only with --itl-concurrency-lin-ms): decode steps and
	// prefill chunks after the first.
	Batch countSummary `json:"batch"`
}

// Timing returns the timing statistics.
func (s *Server) Timing() Timing {
	st := s.timing.Load()
	first, gap, late, rel := st.first.snapshot(), st.gap.snapshot(), st.lateness.snapshot(), st.release.snapshot()
	st.steps.Lock()
	sFirst, sGap, queue, batch := st.schedFirst.snapshot(), st.schedGap.snapshot(), st.queue.snapshot(), st.batch.summary()
	st.steps.Unlock()
	scale, trials := s.currentScale()
	t := Timing{
		TTFTMS:            durationMS(s.model.ttft),
		ITLMS:             durationMS(s.model.itl),
		PrefillUSPerToken: float64(s.model.prefill) / float64(time.Microsecond),
		Clock:             "none",
		WindowS:           time.Since(st.since).Seconds(),
		FirstChunk:        first.stats(),
		Gap:               gap.stats(),
		Lateness:          late.stats(),
		Release:           rel.stats(),
		Schedule: Schedule{
			ITLConcurrencyLinMS: durationMS(s.model.perSeq),
			ITLPerOSLTokenMS:    durationMS(s.model.perOSL),
			MaxNumSeqs:          s.cfg.MaxNumSeqs,
			MaxNumBatchedTokens: s.cfg.MaxBatchedTokens,
			TrialJitterCV:       s.cfg.TrialJitterCV,
			LatencyScale:        scale,
			Trials:              trials,
			First:               sFirst.stats(),
			Gap:                 sGap.stats(),
			QueueWait:           queue.stats(),
			Batch:               batch,
		},
	}
	if s.paced() {
		t.Clock = sharedClock().mode
	}
	return t
}

func durationMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// clearTiming starts the timing statistics afresh. Flushes in flight as it
// happens may land in the old statistics and be lost.
func (s *Server) clearTiming() {
	s.timing.Store(&timingStats{since: time.Now()})
}

// timingState answers GET /mock/timing.
func (s *Server) timingState(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Timing())
}

// clearTimingRoute answers POST /mock/timing/clear.
func (s *Server) clearTimingRoute(w http.ResponseWriter, _ *http.Request) {
	s.clearTiming()
	w.WriteHeader(http.StatusNoContent)
}

// flushed records that f's streaming reply's current chunk of n tokens
// (one, but for a bundled first chunk: --first-chunk-tokens), released at
// released, was flushed at now: its lateness against the schedule at both
// times, and the time since arrival (the first) or since the previous
// chunk's flush (the others); then counts its tokens as gone out when it
// was released, before its write: the client may read it before the flush
// returns, and the server's own TTFT (vLLM's histogram) must not exceed
// what any client could see.
func (f *flight) flushed(released, now time.Time, n int) {
	st := f.s.timing.Load()
	due := f.pacer.due
	st.release.observe(int64(released.Sub(due)))
	st.lateness.observe(int64(now.Sub(due)))
	if f.sent == 0 {
		st.first.observe(int64(now.Sub(f.arrival)))
	} else {
		st.gap.observe(int64(now.Sub(f.flush)))
	}
	f.flush = now
	f.tokens(released, n)
}
