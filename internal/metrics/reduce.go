package metrics

import (
	"cmp"
	"slices"
	"sync"
)

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

// OutputSequenceLength is the request's OSL as AIPerf counts it: its
// output plus reasoning tokens, as the client's tokenizer counted them,
// whatever usage the server reported; under --use-server-token-count the
// record's counts are the server's trusted usage (TakeServerCounts), so
// the OSL is its completion_tokens. Our extension: a reply the client did
// not count (Uncounted, a run interrupted while counting) has the server's
// trusted completion_tokens as its OSL, else none (OSLKnown; 0 here).
func OutputSequenceLength(r *Record) int {
	output, reasoning, _ := outputCounts(r)
	return output + reasoning
}

// outputCounts are the request's output and reasoning token counts, the
// OSL's parts (OutputSequenceLength), and whether they are known: the
// record's own, or for a reply the client did not count (Uncounted) its
// server's trusted usage (completion_tokens less reasoning_tokens, and
// reasoning_tokens), as TakeServerCounts would take them.
func outputCounts(r *Record) (output, reasoning int, known bool) {
	switch u := r.Usage; {
	case !r.Uncounted:
		return r.OutputTokens, r.ReasoningTokens, true
	case u.Trusted():
		output, reasoning = u.outputParts()
		return output, reasoning, true
	}
	return 0, 0, false
}

// OSLKnown reports whether the request's OSL is known: the client counted
// its reply, or the server's trusted usage gives it.
func OSLKnown(r *Record) bool {
	_, _, known := outputCounts(r)
	return known
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
	Streamed  bool // a streamed response arrived (not a whole reply, NotStreamed): TTFTNs holds time_to_first_token
	TTFTNs    int64
	HasITL    bool // streamed with an OSL of at least 2: ITLNs holds inter_token_latency
	ITLNs     float64
	// NoOSL: the OSL is not known (OSLKnown): OSL is 0 and there is no ITL.
	NoOSL bool
}

// Times returns a successful request's latency, OSL, TTFT and ITL; cheap,
// for live views (the metrics are computed from the same).
func Times(r *Record, streaming bool) TokenTimes {
	t := TokenTimes{LatencyNs: LatencyNs(r), OSL: OutputSequenceLength(r),
		Streamed: streaming && !r.NotStreamed && r.ResponseNs.Len() > 0, NoOSL: !OSLKnown(r)}
	if t.Streamed {
		t.TTFTNs = r.ResponseNs.First() - r.SentNs
		if t.HasITL = t.OSL >= 2 && !t.NoOSL; t.HasITL {
			t.ITLNs = float64(t.LatencyNs-t.TTFTNs) / float64(DecodeTokens(r, t.OSL))
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
	full := fullDecode(r, tt)
	if streamed {
		emit(idDecode, ms(tt.LatencyNs-tt.TTFTNs))
		if full.ok {
			emit(idFullDecode, ms(full.ns))
		}
	}
	if hasITL {
		emit(idITL, itlNs/1e6)
	}
	if full.hasITL {
		emit(idFullITL, full.itlNs/1e6)
	}
	if streamed && gaps {
		eachGap(resp, func(v float64) { emit(idICL, v) })
	}
	if hasITL && itlNs > 0 {
		emit(idPerUser, 1e9/itlNs)
	}
	if full.hasITL && full.itlNs > 0 {
		emit(idFullPerUser, 1e9/full.itlNs)
	}
	if tt.LatencyNs > 0 && !tt.NoOSL {
		emit(idE2E, float64(osl)/(float64(tt.LatencyNs)/1e9))
	}
	if streamed && tt.TTFTNs > 0 && r.InputTokens > 0 {
		emit(idPrefill, float64(r.InputTokens)/(float64(tt.TTFTNs)/1e9))
	}
	if !tt.NoOSL {
		emit(idOSL, float64(osl))
	}
	emit(idISL, float64(r.InputTokens))
	if output, reasoning, known := outputCounts(r); known {
		emit(idOutputTokens, float64(output))
		if reasoning > 0 {
			emit(idReasoningTokens, float64(reasoning))
		}
	}
	visitUsage(r, emit)
	if req := r.RequestedOutputTokens; req > 0 && !tt.NoOSL {
		emit(idOSLMismatch, 100*float64(osl-req)/float64(req))
	}
	visitSpecDecode(r.SpecDecode, emit)
	visitHTTP(r.HTTP, emit)
	emit(idSendLag, ms(r.SentNs-r.ScheduledNs))
	visitMedia(r, emit)
}

// fullTimes is a streamed request's full-response decode: from its first
// content response to the end of the HTTP response (AIPerf's
// full_decode_duration), and that over OSL − 1 (its
// full_response_inter_token_latency).
type fullTimes struct {
	ok     bool
	ns     int64
	hasITL bool
	itlNs  float64
}

func fullDecode(r *Record, tt TokenTimes) fullTimes {
	if !tt.Streamed || r.EndNs < r.ResponseNs.First() {
		return fullTimes{}
	}
	f := fullTimes{ok: true, ns: r.EndNs - r.ResponseNs.First()}
	if f.hasITL = tt.OSL >= 2 && !tt.NoOSL; f.hasITL {
		f.itlNs = float64(f.ns) / float64(tt.OSL-1)
	}
	return f
}

// visitInputOnly emits the metrics of a request to an endpoint that
// generates no tokens (embeddings, rankings): latency, ISL, the server's
// prompt count and its prefix-cache counts, and the send lag.
func visitInputOnly(r *Record, emit func(id int, v float64)) {
	emit(idLatency, ms(LatencyNs(r)))
	if r.InputTokens > 0 { // none for an audio transcription, whose input is no text
		emit(idISL, float64(r.InputTokens))
	}
	if u := r.Usage; u.Trusted() {
		emit(idUsagePrompt, float64(u.PromptTokens))
		emitCount(idUsageCacheRead, u.CachedTokens, emit)
		emitCount(idUsageCacheWrite, u.CacheWriteTokens, emit)
		emitCount(idUsageCacheMiss, u.CacheMissTokens, emit)
		if r.InputTokens > 0 {
			emit(idUsagePromptDiff, diffPct(u.PromptTokens, r.InputTokens))
		}
	}
	visitHTTP(r.HTTP, emit)
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

// smallGaps is the most inter-chunk latencies iclStats reads into memory
// and sorts (Compute); more are streamed (computeStream), whose bucket
// counts cost 4 MiB a part to clear whatever the count: each time slice of
// a few hundred requests paid it.
const smallGaps = 1 << 16

// iclStats is the statistics of the successful records' inter-chunk
// latencies: the same, read either way (TestComputeStream).
func iclStats(records []Record) Stats {
	n := 0
	for i := range records {
		if r := &records[i]; r.OK() && r.ResponseNs.Len() > 1 {
			n += r.ResponseNs.Len() - 1
		}
	}
	if n > smallGaps {
		return computeStream(gapParts(records)...)
	}
	vals := make([]float64, 0, n)
	for i := range records {
		if r := &records[i]; r.OK() && r.ResponseNs.Len() > 0 {
			eachGap(r.ResponseNs, func(v float64) { vals = append(vals, v) })
		}
	}
	return Compute(vals)
}

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
	return summarize(records, streaming, true, slos...)
}

// summarize is Summarize; a part of a run (whole false: a time slice)
// leaves out the metrics AIPerf reports of the whole run only (the
// credit-issue latencies, the normalized interactivity) and the
// time-weighted ones, which Timeslices reads from the run's curves.
func summarize(records []Record, streaming, whole bool, slos ...SLO) Summary {
	var (
		vals [numRecordMetrics][]float64
		ok   int
		t    = tally{part: !whole}
	)
	for i := range records {
		if records[i].OK() {
			ok++
		}
	}
	emit := func(id int, v float64) {
		if vals[id] == nil {
			vals[id] = make([]float64, 0, ok)
		}
		vals[id] = append(vals[id], v)
	}
	for i := range records {
		r := &records[i]
		if r.Cancelled {
			t.cancelled++
			continue
		}
		visit(r, streaming, false, emit) // the gaps are read in two passes below
		t.add(r, streaming)
	}

	var (
		s   Summary
		icl Stats
		wg  sync.WaitGroup
	)
	if t.hasICL {
		wg.Go(func() { icl = iclStats(records) })
	}
	stats := computeAll(&vals)
	wg.Wait()
	if t.hasICL {
		stats[idICL] = &icl
	}
	for id, st := range stats {
		switch d := recordDefs[id]; {
		case st == nil:
		case !st.finite():
			s.Dropped = append(s.Dropped, d.tag)
		default:
			s.Metrics = append(s.Metrics, Metric{Tag: d.tag, Header: d.header, Unit: d.unit, Stats: st})
		}
	}
	if whole {
		s.Metrics = append(s.Metrics, issuedLatencies(records)...)
		s.Metrics = append(s.Metrics, sweepMetrics(records, streaming)...)
	}
	duration := t.scalars(&s, ok)
	if len(slos) > 0 {
		addGoodput(&s, goodRequests(records, streaming, slos), ok+t.failed, duration)
	}
	return s
}

// tally is what Summarize counts over a phase's records besides each
// record metric's values.
type tally struct {
	failed, cancelled, malformed, discrepancies int
	totalISL, totalOSL, totalErrISL             float64
	okSpan, failSpan                            span
	withUsage                                   bool // a successful request reported usage
	tokens                                      bool // a successful request generated tokens
	hasICL                                      bool
	tot                                         totals
	inter                                       interactivity
	part                                        bool // a time slice: no run-scoped interactivity
}

// add counts r, a record that was not cancelled.
func (t *tally) add(r *Record, streaming bool) {
	t.tot.add(r)
	t.hasICL = t.hasICL || streaming && r.OK() && r.ResponseNs.Len() >= 2
	t.malformed += r.MalformedChunks
	if r.Error != nil {
		t.failed++
		t.totalErrISL += float64(r.InputTokens)
		if r.EndNs != 0 {
			t.failSpan.cover(r.SentNs, r.EndNs)
		}
		return
	}
	t.totalISL += float64(r.InputTokens)
	if !r.NoTokens {
		t.tokens = true
		t.totalOSL += float64(OutputSequenceLength(r)) // 0 when not known: the total is then a lower bound
	}
	if r.Usage != nil {
		t.withUsage = true
		if usageDiscrepancy(r) {
			t.discrepancies++
		}
	}
	t.okSpan.cover(r.SentNs, r.SentNs+LatencyNs(r))
	if !t.part {
		t.inter.add(r, streaming)
	}
}

// scalars appends the derived and aggregate metrics of ok successful
// requests to s, and returns the benchmark's duration in seconds (0 when
// no request ended).
func (t *tally) scalars(s *Summary, ok int) float64 {
	scalar := func(d def, v float64) {
		s.Metrics = append(s.Metrics, Metric{Tag: d.tag, Header: d.header, Unit: d.unit, Value: v})
	}
	// The benchmark runs from the first send to the last response of the
	// successful requests, or of the failed ones when none succeeded.
	window := t.okSpan
	if !window.set {
		window = t.failSpan
	}
	duration := float64(window.to-window.from) / 1e9
	if window.set && duration > 0 {
		if t.tokens {
			scalar(defOutputThroughput, t.totalOSL/duration)
		}
		if ok > 0 { // AIPerf's input_token_throughput: total_isl over the duration
			scalar(defInputThroughput, t.totalISL/duration)
		}
		if t.tokens {
			scalar(defTotalThroughput, (t.totalISL+t.totalOSL)/duration)
		}
		scalar(defRequestRate, float64(ok)/duration)
	}
	if !t.part {
		t.inter.scalars(scalar)
	}
	scalar(defRequestCount, float64(ok))
	scalar(defErrorCount, float64(t.failed))
	if ok > 0 {
		scalar(defTotalISL, t.totalISL)
	}
	if t.tokens {
		scalar(defTotalOSL, t.totalOSL)
	}
	if t.failed > 0 {
		scalar(defTotalErrorISL, t.totalErrISL)
	}
	if window.set {
		scalar(defDuration, duration)
	}
	if t.withUsage {
		scalar(defUsageDiscrepancy, float64(t.discrepancies))
	}
	if t.tot.osl.asked > 0 {
		scalar(defOSLMismatch, float64(t.tot.osl.missed))
	}
	if t.malformed > 0 {
		scalar(defMalformedChunks, float64(t.malformed))
	}
	if t.cancelled > 0 {
		scalar(defCancelledCount, float64(t.cancelled))
	}
	t.tot.scalars(scalar, ok, t.failed)
	s.SpecDecodeHistogram = t.tot.spec.pooled()
	if !window.set {
		return 0
	}
	return duration
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
