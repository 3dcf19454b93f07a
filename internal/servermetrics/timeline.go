package servermetrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Memory bounds of a timeline. Every series keeps one slot per retained
// scrape of its endpoint (a float64, or count, sum and one value per bucket
// for a histogram), so an endpoint costs scrapes × width × 8 bytes. When an
// endpoint's retained scrapes reach its cap — valueBudget / width, clamped
// to [minRetained, maxRetained] — every other scrape is dropped, except the
// scrapes of phase marks and the latest. A 50-family vLLM endpoint (about
// 1,000 values a scrape) keeps 4,096 scrapes (23 minutes at 333 ms) at full
// resolution; a 10,000-series exporter keeps 419.
const (
	minRetained = 64
	maxRetained = 4096
)

// valueBudget is the float64 values an endpoint retains: 32 MiB (a
// variable for the tests).
var valueBudget = 4 << 20

// timeline is every endpoint's retained samples, in the order the
// collector was given the endpoints.
type timeline struct {
	endpoints []*endpointBuf
	marks     []mark
	// span is the profiling span's window, as reduce found it: the time
	// filter of the Parquet export.
	span window
}

// family is a metric family as its endpoint last declared it.
type family struct {
	name, typ, help string // name and help as shown: redacted
	raw             string // the help as the server wrote it
}

// seriesBuf is one series: a family and a label set on one endpoint, one
// slot per retained scrape of the endpoint (NaN where it was absent).
type seriesBuf struct {
	fam    *family
	typ    string // the type its slots hold
	labels map[string]string
	key    string
	vals   []float64 // gauge, counter, unknown
	// Histograms and summaries: count and sum per scrape, and stride
	// values per scrape in cells (cumulative bucket counts for the upper
	// bounds in bounds, or a summary's values for the quantiles in bounds).
	bounds     []float64
	count, sum []float64
	cells      []float64
	// bad is why a sample of the run could not be (the first reason);
	// falls counts a counter's falls, last is its last sample (NaN
	// before one): see impossible.
	bad   string
	falls int
	last  float64
	// seen is the endpoint's scrape (endpointBuf.scrapes) that last gave
	// the series a sample: a second one in that scrape is a duplicate.
	seen int
}

// stride is the number of cells a histogram or summary takes per scrape.
func (s *seriesBuf) stride() int { return len(s.bounds) }

// width is the number of values the series takes per scrape.
func (s *seriesBuf) width() int {
	if s.vals != nil || s.count == nil {
		return 1
	}
	return 2 + s.stride()
}

// endpointBuf is one endpoint's retained scrapes.
type endpointBuf struct {
	times   []int64 // when each retained scrape completed, on the run's clock
	latency []int64 // how long it took
	pinned  []bool  // a mark's scrape: never thinned out
	series  map[string]*seriesBuf
	order   []*seriesBuf
	fams    map[string]*family
	width   int    // values per scrape, as of the last scrape, and the series new in this one
	key     []byte // scratch for series keys
	// maxSeries bounds the width: a series first seen once the endpoint
	// holds that many values a scrape is dropped (churned counts them), so
	// that an endpoint whose labels change every scrape cannot grow without
	// end. A scrape adds at most maxSeries values (capSeries), so the width
	// stays under twice it.
	maxSeries int
	churned   int
	redact    func(string) string // Options.Redact
	scrapes   int                 // scrapes added, thinned or not
}

func newEndpointBuf(maxSeries int, redact func(string) string) *endpointBuf {
	return &endpointBuf{series: map[string]*seriesBuf{}, fams: map[string]*family{}, maxSeries: maxSeries, redact: redact}
}

// add appends one scrape's families, taken at t after latency ns.
func (b *endpointBuf) add(fams []*dto.MetricFamily, t, latency int64, pinned bool) {
	if len(b.times) >= b.capacity() {
		b.thin()
	}
	b.times = append(b.times, t)
	b.latency = append(b.latency, latency)
	b.pinned = append(b.pinned, pinned)
	b.scrapes++
	b.width = 0
	for _, s := range b.order {
		s.grow()
		b.width += s.width()
	}
	for _, mf := range fams {
		b.addFamily(mf)
	}
}

// capacity is how many scrapes the endpoint may retain at its width.
func (b *endpointBuf) capacity() int {
	return min(maxRetained, max(minRetained, valueBudget/max(b.width, 1)))
}

// grow appends an absent slot for the next scrape.
func (s *seriesBuf) grow() {
	if s.count == nil {
		s.vals = append(s.vals, math.NaN())
		return
	}
	s.count = append(s.count, math.NaN())
	s.sum = append(s.sum, math.NaN())
	for range s.stride() {
		s.cells = append(s.cells, math.NaN())
	}
}

// addFamily stores one family's samples in the last slot of its series.
func (b *endpointBuf) addFamily(mf *dto.MetricFamily) {
	typ := typeOf(mf.GetType())
	name := mf.GetName()
	if typ == "" || strings.HasSuffix(name, "_created") {
		return // a gauge histogram, or the creation times of counters
	}
	if typ == TypeCounter && isMaximum(name) {
		typ = TypeGauge // a high-water mark: its max means something, a delta does not
	}
	name = AIPerfName(name, typ) // the one name of a counter: without _total
	fam := b.fams[name]
	if fam == nil || fam.typ != typ || fam.raw != mf.GetHelp() {
		fam = &family{name: b.redact(name), typ: typ, help: b.redact(mf.GetHelp()), raw: mf.GetHelp()}
		b.fams[name] = fam
	}
	for _, m := range mf.GetMetric() {
		s := b.seriesFor(fam, m.GetLabel())
		if s == nil {
			continue
		}
		last := len(b.times) - 1
		switch typ {
		case TypeHistogram:
			s.setHistogram(last, m.GetHistogram())
		case TypeSummary:
			s.setSummary(last, m.GetSummary())
		default:
			v := scalar(m)
			if math.IsInf(v, 0) {
				s.flag(fmt.Sprintf("a sample of %g", v)) // kept absent; a NaN is a gauge's "no value"
			}
			s.vals[last] = finite(v)
			if typ == TypeCounter {
				s.noteCounter(s.vals[last])
			}
		}
	}
}

// typeOf maps a Prometheus type to ours; "" for what is not reduced.
func typeOf(t dto.MetricType) string {
	switch t {
	case dto.MetricType_GAUGE:
		return TypeGauge
	case dto.MetricType_COUNTER:
		return TypeCounter
	case dto.MetricType_HISTOGRAM:
		return TypeHistogram
	case dto.MetricType_SUMMARY:
		return TypeSummary
	case dto.MetricType_UNTYPED:
		return TypeUnknown
	}
	return ""
}

// scalar is a gauge's, counter's or untyped sample's value.
func scalar(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

// finite is v, or NaN (absent) when v is infinite.
func finite(v float64) float64 {
	if math.IsInf(v, 0) {
		return math.NaN()
	}
	return v
}

// seriesFor returns the series of fam with labels, creating it (absent
// from every earlier scrape) when new, or nil when it is new and the
// endpoint holds maxSeries values a scrape, or when this scrape gave it a
// sample already (a duplicate: the series is flagged, the first sample
// kept).
func (b *endpointBuf) seriesFor(fam *family, labels []*dto.LabelPair) *seriesBuf {
	if !slices.IsSortedFunc(labels, byName) {
		slices.SortFunc(labels, byName) // the parsed sample is ours
	}
	k := append(b.key[:0], fam.name...)
	for _, l := range labels {
		k = append(k, 0)
		k = append(k, l.GetName()...)
		k = append(k, 1)
		k = append(k, l.GetValue()...)
	}
	b.key = k
	if s := b.series[string(k)]; s != nil {
		if s.seen == b.scrapes {
			s.flag(duplicated)
			return nil
		}
		s.seen = b.scrapes
		s.fam = fam
		if s.typ != fam.typ {
			s.reset(fam.typ, len(b.times))
		}
		return s
	}
	if b.width >= b.maxSeries {
		b.churned++
		return nil
	}
	b.width++
	s := &seriesBuf{fam: fam, key: string(k), seen: b.scrapes}
	if len(labels) > 0 {
		s.labels = make(map[string]string, len(labels))
		for _, l := range labels {
			s.labels[b.redact(l.GetName())] = b.redact(l.GetValue())
		}
	}
	s.reset(fam.typ, len(b.times))
	b.series[s.key] = s
	b.order = append(b.order, s)
	return s
}

func byName(a, b *dto.LabelPair) int { return cmp.Compare(a.GetName(), b.GetName()) }

// reset empties s for a family of type typ seen first at scrape n−1 (a
// series whose family changed type starts over).
func (s *seriesBuf) reset(typ string, n int) {
	s.typ = typ
	s.vals, s.count, s.sum, s.cells, s.bounds = nil, nil, nil, nil, nil
	s.bad, s.falls, s.last = "", 0, math.NaN()
	if typ != TypeHistogram && typ != TypeSummary {
		s.vals = nans(n)
		return
	}
	s.count, s.sum = nans(n), nans(n)
	s.cells = []float64{} // bounds are fixed by the first sample
}

func nans(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// setHistogram stores a histogram sample in slot i. The bucket layout is
// fixed by the first sample; a sample with other buckets, or with a value
// that is not finite, is ignored (AIPerf drops those too).
func (s *seriesBuf) setHistogram(i int, h *dto.Histogram) {
	bs := h.GetBucket()
	bounds := make([]float64, 0, len(bs)+1)
	values := make([]float64, 0, len(bs)+1)
	for _, bk := range bs {
		bounds = append(bounds, bk.GetUpperBound())
		v := float64(bk.GetCumulativeCount())
		if bk.CumulativeCountFloat != nil {
			v = bk.GetCumulativeCountFloat()
		}
		values = append(values, v)
	}
	count := float64(h.GetSampleCount())
	if h.SampleCountFloat != nil {
		count = h.GetSampleCountFloat()
	}
	if len(bounds) == 0 || !math.IsInf(bounds[len(bounds)-1], 1) {
		bounds = append(bounds, math.Inf(1)) // +Inf is implied: the count
		values = append(values, count)
	}
	if s.repeats(bounds) {
		return
	}
	sum := h.GetSampleSum()
	s.noteHistogram(bounds, values, count, sum)
	if !allFinite(values) || !allFinite([]float64{count, sum}) || slices.ContainsFunc(bounds, math.IsNaN) || !s.layout(bounds, i) {
		return
	}
	copy(s.cells[i*s.stride():(i+1)*s.stride()], values)
	s.count[i], s.sum[i] = count, sum
}

// allFinite reports whether no value is NaN or infinite.
func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// setSummary stores a summary sample in slot i.
func (s *seriesBuf) setSummary(i int, sm *dto.Summary) {
	qs := sm.GetQuantile()
	bounds := make([]float64, len(qs))
	for j, q := range qs {
		bounds[j] = q.GetQuantile()
	}
	if s.repeats(bounds) || !s.layout(bounds, i) {
		return
	}
	count, sum := float64(sm.GetSampleCount()), sm.GetSampleSum()
	if !allFinite([]float64{count, sum}) {
		return
	}
	cells := s.cells[i*s.stride() : (i+1)*s.stride()]
	for j, q := range qs {
		cells[j] = finite(q.GetValue()) // an empty summary's quantiles are NaN: absent
	}
	s.count[i], s.sum[i] = count, sum
}

// layout fixes s's bounds on its first sample (slot i, every earlier slot
// absent) and reports whether bounds match them.
func (s *seriesBuf) layout(bounds []float64, i int) bool {
	if s.bounds == nil && len(s.cells) == 0 {
		s.bounds = bounds
		s.cells = nans((i + 1) * len(bounds))
		return true
	}
	return slices.Equal(s.bounds, bounds)
}

// thin drops every other scrape but the pinned ones and the latest.
func (b *endpointBuf) thin() {
	keep := make([]bool, len(b.times))
	for i := range keep {
		keep[i] = b.pinned[i] || i%2 == 0 || i == len(keep)-1
	}
	b.times = compact(b.times, keep, 1)
	b.latency = compact(b.latency, keep, 1)
	b.pinned = compact(b.pinned, keep, 1)
	for _, s := range b.order {
		if s.count == nil {
			s.vals = compact(s.vals, keep, 1)
			continue
		}
		s.count, s.sum = compact(s.count, keep, 1), compact(s.sum, keep, 1)
		s.cells = compact(s.cells, keep, s.stride())
	}
}

// compact keeps the runs of stride elements of xs whose keep is set.
func compact[T any](xs []T, keep []bool, stride int) []T {
	out := xs[:0]
	for i, k := range keep {
		if k && stride > 0 {
			out = append(out, xs[i*stride:(i+1)*stride]...)
		}
	}
	return out
}

// formatLE writes a bucket's upper bound as Prometheus does ("+Inf", "0.25").
func formatLE(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
