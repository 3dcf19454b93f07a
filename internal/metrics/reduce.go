package metrics

import (
	"cmp"
	"slices"
	"sync"
)

// AIPerf metric tags.
const (
	TagTTFT                   = "time_to_first_token"
	TagTTST                   = "time_to_second_token"
	TagTTFO                   = "time_to_first_output_token"
	TagRequestLatency         = "request_latency"
	TagITL                    = "inter_token_latency"
	TagICL                    = "inter_chunk_latency"
	TagPerUserThroughput      = "output_token_throughput_per_user"
	TagOSL                    = "output_sequence_length"
	TagISL                    = "input_sequence_length"
	TagOutputTokenCount       = "output_token_count"
	TagReasoningTokenCount    = "reasoning_token_count"
	TagUsagePromptTokens      = "usage_prompt_tokens"
	TagUsageCompletionTokens  = "usage_completion_tokens"
	TagUsageTotalTokens       = "usage_total_tokens"
	TagUsagePromptDiffPct     = "usage_prompt_tokens_diff_pct"
	TagUsageCompletionDiffPct = "usage_completion_tokens_diff_pct"
	TagSendLag                = "send_lag" // ours: sent − scheduled
	TagErrorISL               = "error_isl"

	TagOutputTokenThroughput = "output_token_throughput"
	TagTotalTokenThroughput  = "total_token_throughput"
	TagRequestThroughput     = "request_throughput"
	TagRequestCount          = "request_count"
	TagErrorRequestCount     = "error_request_count"
	TagTotalISL              = "total_isl"
	TagTotalOSL              = "total_osl"
	TagTotalErrorISL         = "total_error_isl"
	TagBenchmarkDuration     = "benchmark_duration"
	TagUsageDiscrepancyCount = "usage_discrepancy_count"
	TagMalformedChunkCount   = "malformed_chunk_count" // ours: stream lines that were not a response chunk
	TagCancelledRequestCount = "cancelled_request_count"
	TagGoodput               = "goodput"
	TagGoodRequestCount      = "good_request_count"
	TagGoodRequestFraction   = "good_request_fraction"
)

// Units as AIPerf displays them.
const (
	UnitMs           = "ms"
	UnitSec          = "sec"
	UnitTokens       = "tokens"
	UnitPercent      = "%"
	UnitRequests     = "requests"
	UnitTokensPerSec = "tokens/sec"
	UnitPerUser      = "tokens/sec/user"
	UnitRequestsSec  = "requests/sec"
	UnitChunks       = "chunks"
	UnitRatio        = "ratio"
)

// def names one metric for display.
type def struct{ tag, header, unit string }

// Record metrics, in AIPerf display order; the index is the metric's id.
const (
	idTTFT = iota
	idTTST
	idTTFO
	idLatency
	idITL
	idICL
	idPerUser
	idOSL
	idISL
	idOutputTokens
	idReasoningTokens
	idUsagePrompt
	idUsageCompletion
	idUsageTotal
	idUsagePromptDiff
	idUsageCompletionDiff
	idSendLag
	idErrorISL
	// The media metrics (media.go).
	idNumImages
	idImageThroughput
	idImageLatency
	idAudioDuration
	idRTFX
	idVideoInferenceTime
	idVideoPeakMemory
	idPayloadBytes
	numRecordMetrics
)

var recordDefs = [numRecordMetrics]def{
	idTTFT:                {TagTTFT, "Time to First Token", UnitMs},
	idTTST:                {TagTTST, "Time to Second Token", UnitMs},
	idTTFO:                {TagTTFO, "Time to First Output Token", UnitMs},
	idLatency:             {TagRequestLatency, "Request Latency", UnitMs},
	idITL:                 {TagITL, "Inter Token Latency", UnitMs},
	idICL:                 {TagICL, "Inter Chunk Latency", UnitMs},
	idPerUser:             {TagPerUserThroughput, "Output Token Throughput Per User", UnitPerUser},
	idOSL:                 {TagOSL, "Output Sequence Length", UnitTokens},
	idISL:                 {TagISL, "Input Sequence Length", UnitTokens},
	idOutputTokens:        {TagOutputTokenCount, "Output Token Count", UnitTokens},
	idReasoningTokens:     {TagReasoningTokenCount, "Reasoning Token Count", UnitTokens},
	idUsagePrompt:         {TagUsagePromptTokens, "Usage Prompt Tokens", UnitTokens},
	idUsageCompletion:     {TagUsageCompletionTokens, "Usage Completion Tokens", UnitTokens},
	idUsageTotal:          {TagUsageTotalTokens, "Usage Total Tokens", UnitTokens},
	idUsagePromptDiff:     {TagUsagePromptDiffPct, "Usage Prompt Diff", UnitPercent},
	idUsageCompletionDiff: {TagUsageCompletionDiffPct, "Usage Completion Diff", UnitPercent},
	idSendLag:             {TagSendLag, "Send Lag", UnitMs},
	idErrorISL:            {TagErrorISL, "Error Input Sequence Length", UnitTokens},
}

// Derived and aggregate metrics, in display order.
var (
	defOutputThroughput = def{TagOutputTokenThroughput, "Output Token Throughput", UnitTokensPerSec}
	defTotalThroughput  = def{TagTotalTokenThroughput, "Total Token Throughput", UnitTokensPerSec}
	defRequestRate      = def{TagRequestThroughput, "Request Throughput", UnitRequestsSec}
	defRequestCount     = def{TagRequestCount, "Request Count", UnitRequests}
	defErrorCount       = def{TagErrorRequestCount, "Error Request Count", UnitRequests}
	defTotalISL         = def{TagTotalISL, "Total Input Sequence Length", UnitTokens}
	defTotalOSL         = def{TagTotalOSL, "Total Output Sequence Length", UnitTokens}
	defTotalErrorISL    = def{TagTotalErrorISL, "Total Error Input Sequence Length", UnitTokens}
	defDuration         = def{TagBenchmarkDuration, "Benchmark Duration", UnitSec}
	defUsageDiscrepancy = def{TagUsageDiscrepancyCount, "Usage Discrepancy Count", UnitRequests}
	defMalformedChunks  = def{TagMalformedChunkCount, "Malformed Chunk Count", UnitChunks}
	defCancelledCount   = def{TagCancelledRequestCount, "Cancelled Request Count", UnitRequests}
)

// scalarDefs are the derived and aggregate metrics, in display order.
var scalarDefs = [...]def{defOutputThroughput, defTotalThroughput, defRequestRate, defRequestCount, defErrorCount,
	defTotalISL, defTotalOSL, defTotalErrorISL, defDuration, defUsageDiscrepancy, defMalformedChunks, defCancelledCount,
	defTotalOutputTokens, defTotalReasoning, defTotalUsagePrompt, defTotalUsageCompletion, defTotalUsageTotal,
	defMinRequest, defMaxResponse, defErrorRate,
	defGoodput, defGoodCount, defGoodFraction}

// RecordTags lists the tags of the record metrics, in display order: each
// summarises to a distribution (Stats).
func RecordTags() []string {
	out := make([]string, len(recordDefs))
	for i, d := range recordDefs {
		out[i] = d.tag
	}
	return out
}

// ScalarTags lists the tags of the derived and aggregate metrics, in display
// order: each summarises to a single Value.
func ScalarTags() []string {
	out := make([]string, len(scalarDefs))
	for i, d := range scalarDefs {
		out[i] = d.tag
	}
	return out
}

// UnitOf is the display unit of the metric tag ("ms" for
// time_to_first_token), "" for a tag this package does not define.
func UnitOf(tag string) string {
	for _, d := range recordDefs {
		if d.tag == tag {
			return d.unit
		}
	}
	for _, d := range scalarDefs {
		if d.tag == tag {
			return d.unit
		}
	}
	return ""
}

// Value is one metric of one request, as the per-request export shows it.
type Value struct {
	Tag  string
	Unit string
	V    float64   // the value, unless the metric is list-valued
	List []float64 // every value of a list-valued metric (inter_chunk_latency)
}

// RecordMetrics returns the metrics of one request, in display order, holding
// only those that apply: streaming-only metrics need streaming and a
// response, usage metrics need server usage. A request that did not succeed
// (failed or cancelled) has only error_isl.
func RecordMetrics(r Record, streaming bool) []Value {
	var out []Value
	visit(&r, streaming, true, func(id int, v float64) {
		d := recordDefs[id]
		if id == idICL {
			if n := len(out); n > 0 && out[n-1].Tag == d.tag {
				out[n-1].List = append(out[n-1].List, v)
				return
			}
			out = append(out, Value{Tag: d.tag, Unit: d.unit, List: []float64{v}})
			return
		}
		out = append(out, Value{Tag: d.tag, Unit: d.unit, V: v})
	})
	return out
}

// OutputSequenceLength is the request's OSL: the server's completion token
// count when it reported usage that can be trusted, else the client's count
// of output plus reasoning tokens.
func OutputSequenceLength(r *Record) int {
	if r.Usage.Trusted() {
		return r.Usage.CompletionTokens
	}
	return r.OutputTokens + r.ReasoningTokens
}

// LatencyNs is the request latency in ns: from send to the last response that
// carried generated text, or to the end of the request when none did.
func LatencyNs(r *Record) int64 {
	if r.ResponseNs.Len() > 0 {
		return r.ResponseNs.Last() - r.SentNs
	}
	return r.EndNs - r.SentNs
}

// TokenTimes is a successful request's timing as its metrics hold it.
type TokenTimes struct {
	LatencyNs int64
	OSL       int
	Streamed  bool // a streamed response arrived: TTFTNs holds time_to_first_token
	TTFTNs    int64
	HasITL    bool // streamed with an OSL of at least 2: ITLNs holds inter_token_latency
	ITLNs     float64
}

// Times returns a successful request's latency, OSL, TTFT and ITL; cheap,
// for live views (the metrics are computed from the same).
func Times(r *Record, streaming bool) TokenTimes {
	t := TokenTimes{LatencyNs: LatencyNs(r), OSL: OutputSequenceLength(r), Streamed: streaming && r.ResponseNs.Len() > 0}
	if t.Streamed {
		t.TTFTNs = r.ResponseNs.First() - r.SentNs
		if t.HasITL = t.OSL >= 2; t.HasITL {
			t.ITLNs = float64(t.LatencyNs-t.TTFTNs) / float64(t.OSL-1)
		}
	}
	return t
}

// visit emits every record metric of r, in id order, through emit; the
// inter-chunk latencies only with gaps.
func visit(r *Record, streaming, gaps bool, emit func(id int, v float64)) {
	if !r.OK() {
		emit(idErrorISL, float64(r.InputTokens))
		return
	}
	if r.NoTokens {
		visitInputOnly(r, emit)
		return
	}
	resp := r.ResponseNs
	tt := Times(r, streaming)
	osl, streamed, itlNs, hasITL := tt.OSL, tt.Streamed, tt.ITLNs, tt.HasITL
	if streamed {
		emit(idTTFT, ms(tt.TTFTNs))
		if second, ok := resp.Second(); ok {
			emit(idTTST, ms(second-resp.First()))
		}
		if r.FirstOutputNs != 0 {
			emit(idTTFO, ms(r.FirstOutputNs-r.SentNs))
		}
	}
	emit(idLatency, ms(tt.LatencyNs))
	if hasITL {
		emit(idITL, itlNs/1e6)
	}
	if streamed && gaps {
		eachGap(resp, func(v float64) { emit(idICL, v) })
	}
	if hasITL && itlNs > 0 {
		emit(idPerUser, 1e9/itlNs)
	}
	emit(idOSL, float64(osl))
	emit(idISL, float64(r.InputTokens))
	emit(idOutputTokens, float64(r.OutputTokens))
	if r.ReasoningTokens > 0 {
		emit(idReasoningTokens, float64(r.ReasoningTokens))
	}
	if u := r.Usage; u.Trusted() {
		emit(idUsagePrompt, float64(u.PromptTokens))
		emit(idUsageCompletion, float64(u.CompletionTokens))
		emit(idUsageTotal, float64(u.TotalTokens))
		if r.InputTokens > 0 {
			emit(idUsagePromptDiff, diffPct(u.PromptTokens, r.InputTokens))
		}
		if client := r.OutputTokens + r.ReasoningTokens; client > 0 {
			emit(idUsageCompletionDiff, diffPct(u.CompletionTokens, client))
		}
	}
	emit(idSendLag, ms(r.SentNs-r.ScheduledNs))
	visitMedia(r, emit)
}

// visitInputOnly emits the metrics of a request to an endpoint that
// generates no tokens (embeddings, rankings): latency, ISL, the server's
// prompt count and the send lag.
func visitInputOnly(r *Record, emit func(id int, v float64)) {
	emit(idLatency, ms(LatencyNs(r)))
	emit(idISL, float64(r.InputTokens))
	if u := r.Usage; u.Trusted() {
		emit(idUsagePrompt, float64(u.PromptTokens))
		if r.InputTokens > 0 {
			emit(idUsagePromptDiff, diffPct(u.PromptTokens, r.InputTokens))
		}
	}
	emit(idSendLag, ms(r.SentNs-r.ScheduledNs))
	visitMedia(r, emit)
}

// eachGap yields the gaps between consecutive stamps, in ms: the
// inter-chunk latencies.
func eachGap(resp Stamps, yield func(float64)) {
	resp.Gaps(func(ns int64) { yield(ms(ns)) })
}

// streamParts is how many parts the inter-chunk latencies are read in, each
// on its own goroutine: a constant, not the number of CPUs, so that a run's
// sums (added part by part) are the same on every machine.
const streamParts = 4

// gapParts splits the successful records' inter-chunk latencies into
// streamParts runs of consecutive records.
func gapParts(records []Record) []func(yield func(float64)) {
	parts := make([]func(yield func(float64)), streamParts)
	for p := range parts {
		part := records[p*len(records)/streamParts : (p+1)*len(records)/streamParts]
		parts[p] = func(yield func(float64)) {
			for i := range part {
				if r := &part[i]; r.OK() && r.ResponseNs.Len() > 0 {
					eachGap(r.ResponseNs, yield)
				}
			}
		}
	}
	return parts
}

// ms converts a nanosecond interval to milliseconds.
func ms(ns int64) float64 { return float64(ns) / 1e6 }

// diffPct is |server − client| / client × 100.
func diffPct(server, client int) float64 {
	d := server - client
	if d < 0 {
		d = -d
	}
	return float64(d) / float64(client) * 100
}

// Summarize reduces a phase's records to its summary: every record metric
// that has at least one value (with Stats), then the derived and aggregate
// metrics (with Value), in AIPerf display order. Successful records feed the
// metrics, failed ones the error counts; cancelled records are left out.
// Non-streaming runs have no TTFT, TTST, TTFO, ITL, ICL or per-user
// throughput. With SLOs (--goodput) it adds goodput, good_request_count
// and good_request_fraction.
func Summarize(records []Record, streaming bool, slos ...SLO) Summary {
	var (
		vals               [numRecordMetrics][]float64
		ok, failed         int
		totalISL, totalOSL float64
		totalErrISL        float64
		okSpan, failSpan   span
		withUsage          bool // a successful request reported usage
		discrepancies      int
		malformed          int
		cancelled          int // cut by the phase's end or aborted on purpose
		tot                totals
		tokens             bool // a successful request generated tokens
	)
	for i := range records {
		if records[i].OK() {
			ok++
		}
	}
	hasICL := false
	emit := func(id int, v float64) {
		if vals[id] == nil {
			vals[id] = make([]float64, 0, ok)
		}
		vals[id] = append(vals[id], v)
	}
	for i := range records {
		r := &records[i]
		if r.Cancelled {
			cancelled++
			continue
		}
		visit(r, streaming, false, emit) // the gaps are read in two passes below
		tot.add(r)
		hasICL = hasICL || streaming && r.OK() && r.ResponseNs.Len() >= 2
		malformed += r.MalformedChunks
		if r.Error != nil {
			failed++
			totalErrISL += float64(r.InputTokens)
			if r.EndNs != 0 {
				failSpan.cover(r.SentNs, r.EndNs)
			}
			continue
		}
		totalISL += float64(r.InputTokens)
		if !r.NoTokens {
			tokens = true
			totalOSL += float64(OutputSequenceLength(r))
		}
		if r.Usage != nil {
			withUsage = true
			if usageDiscrepancy(r) {
				discrepancies++
			}
		}
		okSpan.cover(r.SentNs, r.SentNs+LatencyNs(r))
	}
	// The benchmark runs from the first send to the last response of the
	// successful requests, or of the failed ones when none succeeded.
	window := okSpan
	if !window.set {
		window = failSpan
	}

	var (
		s   Summary
		icl Stats
		wg  sync.WaitGroup
	)
	if hasICL {
		wg.Go(func() { icl = computeStream(gapParts(records)...) })
	}
	stats := computeAll(&vals)
	wg.Wait()
	if hasICL {
		stats[idICL] = &icl
	}
	for id, st := range stats {
		if st != nil {
			d := recordDefs[id]
			s.Metrics = append(s.Metrics, Metric{Tag: d.tag, Header: d.header, Unit: d.unit, Stats: st})
		}
	}
	scalar := func(d def, v float64) {
		s.Metrics = append(s.Metrics, Metric{Tag: d.tag, Header: d.header, Unit: d.unit, Value: v})
	}
	duration := float64(window.to-window.from) / 1e9
	if window.set && duration > 0 {
		if tokens {
			scalar(defOutputThroughput, totalOSL/duration)
			scalar(defTotalThroughput, (totalISL+totalOSL)/duration)
		}
		scalar(defRequestRate, float64(ok)/duration)
	}
	scalar(defRequestCount, float64(ok))
	scalar(defErrorCount, float64(failed))
	if ok > 0 {
		scalar(defTotalISL, totalISL)
	}
	if tokens {
		scalar(defTotalOSL, totalOSL)
	}
	if failed > 0 {
		scalar(defTotalErrorISL, totalErrISL)
	}
	if window.set {
		scalar(defDuration, duration)
	}
	if withUsage {
		scalar(defUsageDiscrepancy, float64(discrepancies))
	}
	if malformed > 0 {
		scalar(defMalformedChunks, float64(malformed))
	}
	if cancelled > 0 {
		scalar(defCancelledCount, float64(cancelled))
	}
	tot.scalars(scalar, ok, failed)
	if len(slos) > 0 {
		d := 0.0
		if window.set {
			d = duration
		}
		addGoodput(&s, goodRequests(records, streaming, slos), ok+failed, d)
	}
	return s
}

// span is a time interval in ns, grown to cover others.
type span struct {
	from, to int64
	set      bool
}

// cover grows s to include [from, to].
func (s *span) cover(from, to int64) {
	if !s.set {
		*s = span{from: from, to: to, set: true}
		return
	}
	s.from, s.to = min(s.from, from), max(s.to, to)
}

// computeAll sorts and reduces every non-empty value list, in parallel: the
// sorts dominate the cost of Summarize on large runs.
func computeAll(vals *[numRecordMetrics][]float64) [numRecordMetrics]*Stats {
	var (
		out [numRecordMetrics]*Stats
		wg  sync.WaitGroup
	)
	for id, v := range vals {
		if len(v) == 0 {
			continue
		}
		wg.Go(func() {
			slices.Sort(v) // v is Summarize's own buffer
			st := computeSorted(v)
			out[id] = &st
		})
	}
	wg.Wait()
	return out
}

// Errors groups failures by code, type and message with its volatile parts
// (addresses, ports, ids, numbers) normalised, most frequent first; ties keep
// first-seen order. A group whose messages were all identical shows that
// message, else the normalised form. Cancelled requests are not errors.
func Errors(records []Record) []ErrorCount {
	type group struct {
		count  int
		shown  Error // the first error, or its normalised form once messages differ
		varied bool
	}
	var groups []*group
	index := map[Error]*group{}
	for i := range records {
		r := &records[i]
		if r.Cancelled || r.Error == nil {
			continue
		}
		key := Error{Code: r.Error.Code, Type: r.Error.Type, Message: NormalizeMessage(r.Error.Message)}
		g, seen := index[key]
		if !seen {
			g = &group{shown: *r.Error}
			index[key] = g
			groups = append(groups, g)
		} else if !g.varied && g.shown.Message != r.Error.Message {
			g.varied, g.shown = true, key
		}
		g.count++
	}
	out := make([]ErrorCount, len(groups))
	for i, g := range groups {
		out[i] = ErrorCount{Error: g.shown, Count: g.count}
	}
	slices.SortStableFunc(out, func(a, b ErrorCount) int { return cmp.Compare(b.Count, a.Count) })
	return out
}
