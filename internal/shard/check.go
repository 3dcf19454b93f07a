package shard

import (
	"fmt"
	"time"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// A worker's input is untrusted: each record it sends is checked, once
// moved onto the coordinator's timebase, before it is merged. A record no
// request could have left (a stamp outside its phase's window, a negative
// duration or count) fails the cell, naming the worker; so does one that
// arrives twice or lies beyond the worker's share, and a done report that
// does not account for the records that arrived (tally.go).

// clockSlack is how far a worker's stamp may stray outside its phase's
// window on the coordinator's clock, beside the clock estimate's round
// trip: the two clocks' drift over a long run, never a real request.
const clockSlack = 5 * time.Second

// maxNumber bounds a record's numbers (index, session, turn, prompt,
// token counts): far beyond any run, far below an overflow once
// renumbered (x·workers + w).
const maxNumber = 1 << 40

// window is where the records of a phase under way may lie, in ns on the
// coordinator's clock: from its start instant to the moment the record
// arrived, each end widened by slack.
type window struct {
	phase       *plan.Phase
	from, until int64
}

// checkRecord reports why r (on the coordinator's timebase) is impossible,
// nil when it is not; urls is the number of --url (0: unchecked).
func checkRecord(r *metrics.Record, w window, urls int) error {
	ph := w.phase
	if r.PhaseKind != ph.Kind {
		return fmt.Errorf("a record of the %s phase marked phase_kind %q (want %q)", ph.Name, r.PhaseKind, ph.Kind)
	}
	if err := checkNumbers(r.Index, "", []number{{"index", r.Index}, {"request_num", r.RequestNum}, {"session", r.Session},
		{"turn", r.Turn}, {"prompt", r.Prompt}, {"url", r.URL}, {"input_tokens", r.InputTokens},
		{"output_tokens", r.OutputTokens}, {"reasoning_tokens", r.ReasoningTokens},
		{"requested_output_tokens", r.RequestedOutputTokens}, {"malformed_chunks", r.MalformedChunks}}); err != nil {
		return err
	}
	if c := r.Client; c != nil {
		if err := checkNumbers(r.Index, "client_counts ", []number{{"input_tokens", c.InputTokens},
			{"output_tokens", c.OutputTokens}, {"reasoning_tokens", c.ReasoningTokens}}); err != nil {
			return err
		}
	}
	if urls > 0 && r.URL >= urls {
		return fmt.Errorf("record %d: url %d is not one of the %d --url", r.Index, r.URL, urls)
	}
	if r.Status < 0 || r.Status > 999 {
		return fmt.Errorf("record %d: status %d is not an HTTP status", r.Index, r.Status)
	}
	if err := checkUsage(r); err != nil {
		return err
	}
	if err := checkMedia(r); err != nil {
		return err
	}
	if err := checkSpecDecode(r); err != nil {
		return err
	}
	return checkTimes(r, w)
}

// checkMedia refuses media figures no request could have: negative or
// not finite.
func checkMedia(r *metrics.Record) error {
	m := r.Media
	if m == nil {
		return nil
	}
	vals := []float64{float64(m.Images), m.AudioSeconds, float64(m.PayloadBytes)}
	for _, p := range []*float64{m.VideoInferenceS, m.VideoPeakMemoryMB} {
		if p != nil {
			vals = append(vals, *p)
		}
	}
	for _, v := range vals {
		if !(v >= 0 && v <= maxNumber) {
			return fmt.Errorf("record %d: a media figure %v is out of range", r.Index, v)
		}
	}
	return nil
}

// checkUsage refuses negative usage counts, the first content chunk's
// (first_content_chunk_tokens, --per-chunk-usage) among them: no reply's
// usage holds one (a negative count is not read as one). The server's
// plausibility (metrics.CheckUsage) is judged when the record is finished,
// as a local record's is; so is a first chunk count of 0 or of the whole
// reply or more, which a server may report: the ITL then divides by
// OSL − 1 and the run's warning names the request (metrics.DecodeTokens,
// ChunkUsageWarning), as in a run without --workers.
func checkUsage(r *metrics.Record) error {
	u := r.Usage
	if u == nil {
		return nil
	}
	opt := func(n *int) int {
		if n == nil {
			return 0
		}
		return *n
	}
	return checkNumbers(r.Index, "usage ", []number{{"prompt_tokens", u.PromptTokens},
		{"completion_tokens", u.CompletionTokens}, {"total_tokens", opt(u.TotalTokens)},
		{"reasoning_tokens", u.ReasoningTokens}, {"cached_tokens", opt(u.CachedTokens)},
		{"cache_write_tokens", opt(u.CacheWriteTokens)}, {"cache_miss_tokens", opt(u.CacheMissTokens)},
		{"accepted_prediction_tokens", opt(u.AcceptedPredictionTokens)},
		{"rejected_prediction_tokens", opt(u.RejectedPredictionTokens)},
		{"first_content_chunk_tokens", opt(u.FirstChunkTokens)}})
}

// number is a record's count or number, by its JSON name.
type number struct {
	name string
	v    int
}

// checkNumbers refuses the first of a record's numbers that is negative
// or beyond maxNumber, its name prefixed by where it lies ("usage ").
func checkNumbers(index int, prefix string, nums []number) error {
	for _, n := range nums {
		if n.v < 0 || n.v > maxNumber {
			return fmt.Errorf("record %d: %s%s %d is out of range", index, prefix, n.name, n.v)
		}
	}
	return nil
}

// checkSpecDecode refuses speculative-decoding counts out of range and
// rates that are not numbers in their range.
func checkSpecDecode(r *metrics.Record) error {
	sd := r.SpecDecode
	if sd == nil {
		return nil
	}
	counts := []int{sd.NumAcceptedDraftTokens, sd.NumDraftTokens, sd.NumSpecSteps}
	if sd.NumSpecTokens != nil {
		counts = append(counts, *sd.NumSpecTokens)
	}
	for k, n := range sd.AcceptanceHistogram {
		counts = append(counts, k, n)
	}
	counts = append(append(counts, sd.PerStepAccepted...), sd.PerStepDrafted...)
	for _, n := range counts {
		if n < 0 || n > maxNumber {
			return fmt.Errorf("record %d: a speculative-decoding count %d is out of range", r.Index, n)
		}
	}
	if !(sd.DraftAcceptanceRate >= 0 && sd.DraftAcceptanceRate <= 1) ||
		!(sd.MeanAcceptanceLength >= 0 && sd.MeanAcceptanceLength <= maxNumber) {
		return fmt.Errorf("record %d: speculative-decoding rate %g or acceptance length %g is out of range",
			r.Index, sd.DraftAcceptanceRate, sd.MeanAcceptanceLength)
	}
	return nil
}

// checkTimes checks every stamp against the phase's window and the
// request's own order: sent ≤ each response (non-decreasing) ≤ end.
func checkTimes(r *metrics.Record, w window) error {
	in := func(name string, t int64) error {
		if t < w.from || t > w.until {
			return fmt.Errorf("record %d: %s %s is outside the %s phase's window (%s to %s on the coordinator's clock)",
				r.Index, name, ms(t), w.phase.Name, ms(w.from), ms(w.until))
		}
		return nil
	}
	for _, s := range []struct {
		name string
		t    int64
	}{{"scheduled_ns", r.ScheduledNs}, {"sent_ns", r.SentNs}, {"end_ns", r.EndNs}} {
		if err := in(s.name, s.t); err != nil {
			return err
		}
	}
	if r.EndNs < r.SentNs {
		return fmt.Errorf("record %d: a negative duration: end_ns is %s before sent_ns", r.Index, ms(r.SentNs-r.EndNs))
	}
	if r.FirstOutputNs != 0 && (r.FirstOutputNs < r.SentNs || r.FirstOutputNs > r.EndNs) {
		return fmt.Errorf("record %d: first_output_ns is outside the request (sent to end)", r.Index)
	}
	s := r.ResponseNs
	if s.Len() == 0 {
		return nil
	}
	if s.First() < r.SentNs || s.Last() > r.EndNs {
		return fmt.Errorf("record %d: response_ns runs outside the request (sent to end): a negative duration", r.Index)
	}
	var bad bool
	s.Gaps(func(g int64) { bad = bad || g < 0 })
	if bad {
		return fmt.Errorf("record %d: response_ns goes back in time: a negative inter-token latency", r.Index)
	}
	return nil
}

// ms formats a clock stamp in ms.
func ms(ns int64) string { return fmt.Sprintf("%.3f ms", float64(ns)/1e6) }
