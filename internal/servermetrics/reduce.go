package servermetrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/stats"
)

// percentiles are the ranks AIPerf reports, with their stat names.
var percentiles = []struct {
	q    float64
	name string
}{{0.01, "p1"}, {0.05, "p5"}, {0.10, "p10"}, {0.25, "p25"}, {0.50, "p50"}, {0.75, "p75"}, {0.90, "p90"}, {0.95, "p95"}, {0.99, "p99"}}

// window is a stretch of the run to reduce over, with the mark scrapes
// that bound it on each endpoint (−1 where an endpoint has none).
type window struct {
	name               string
	begin, end         int64
	beginMark, endMark []int64
}

// windows are the phases to reduce over, and the profiling span when it is
// not one of them; it sets r.Span.
func windows(r *Result, marks []mark, warmup []string, endpoints int) []window {
	ws := make([]window, 0, len(r.Phases)+1)
	var prof []int
	for i, p := range r.Phases {
		w := window{name: p.Name, begin: p.BeginNs, end: p.EndNs, beginMark: none(endpoints), endMark: none(endpoints)}
		for _, m := range marks {
			if m.phase == i && m.begin {
				w.beginMark[m.ep] = m.t
			} else if m.phase == i {
				w.endMark[m.ep] = m.t
			}
		}
		ws = append(ws, w)
		if p.Name != plan.KindWarmup && p.Name != PhaseReset && !slices.Contains(warmup, p.Name) {
			prof = append(prof, i)
		}
	}
	switch len(prof) {
	case 0:
		r.Span = PhaseSpan
		ws = append(ws, window{name: PhaseSpan, begin: r.StartNs, end: r.EndNs, beginMark: none(endpoints), endMark: none(endpoints)})
	case 1:
		r.Span = r.Phases[prof[0]].Name
	default:
		first, last := ws[prof[0]], ws[prof[len(prof)-1]]
		r.Span = PhaseSpan
		ws = append(ws, window{name: PhaseSpan, begin: first.begin, end: last.end, beginMark: first.beginMark, endMark: last.endMark})
		if between := inBetween(r.Phases, prof); len(between) > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the profiling span, from phase %s to phase %s, holds %s, "+
				"which is not profiling: its server-side totals include %s work (each profiling phase's own figures do not)",
				first.name, last.name, strings.Join(between, ", "), plural(len(between), "that phase's", "those phases'")))
		}
	}
	return ws
}

// inBetween names the phases between the first and the last of the
// profiling phases prof that are not profiling (a warmup run between two
// profiling phases).
func inBetween(phases []Phase, prof []int) []string {
	var out []string
	for i := prof[0] + 1; i < prof[len(prof)-1]; i++ {
		if !slices.Contains(prof, i) {
			out = append(out, phases[i].Name)
		}
	}
	return out
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func none(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = -1
	}
	return out
}

// span is a window on one endpoint: ref is the counters' reference scrape
// (the window's begin mark, else the last scrape before it), lo..hi the
// scrapes inside it (hi is the end mark when there is one), edge..hi those
// a gauge's time-weighted average covers (edge is the begin mark when
// there is one, else lo: a scrape that landed while the mark was taken is
// from before the load as well).
type span struct {
	ref, lo, hi, edge int
	begin, end        int64
	times             []int64
}

// span locates window w on the endpoint's retained scrapes.
func (b *endpointBuf) span(w window, ep int) (span, bool) {
	n := len(b.times)
	sp := span{begin: w.begin, end: w.end, times: b.times}
	sp.lo = sort.Search(n, func(i int) bool { return b.times[i] >= w.begin })
	sp.hi = sort.Search(n, func(i int) bool { return b.times[i] > w.end }) - 1
	if t := w.endMark[ep]; t >= 0 {
		sp.hi = b.at(t)
	}
	sp.edge = sp.lo
	switch t := w.beginMark[ep]; {
	case t >= 0:
		sp.ref = b.at(t)
		sp.edge = sp.ref
	case sp.lo > 0:
		sp.ref = sp.lo - 1
	default:
		sp.ref = sp.lo
	}
	return sp, n > 0 && sp.hi >= sp.ref && sp.hi >= 0
}

// at is the index of the retained scrape taken at t (a mark's scrape is
// never thinned out).
func (b *endpointBuf) at(t int64) int {
	i, _ := slices.BinarySearch(b.times, t)
	return min(i, len(b.times)-1)
}

// reduce fills r.Series from r.timeline.
func reduce(r *Result, marks []mark, o Options) {
	ws := windows(r, marks, o.Warmup, len(r.Endpoints))
	for _, w := range ws {
		if w.name == r.Span {
			r.timeline.span = w
		}
	}
	for ei, b := range r.timeline.endpoints {
		ep := r.Endpoints[ei]
		warned := map[*seriesBuf]bool{}
		for _, w := range ws {
			sp, ok := b.span(w, ei)
			if !ok {
				continue
			}
			short, shortSaid := b.uncovered(w, ei, sp, o.Interval), false
			var absent *seriesBuf // the first series refused for want of a reference (seriesRef)
			var absentWhy string
			absentOthers := 0
			for _, s := range b.order {
				ssp, gap := b.seriesRef(s, w, sp, o.Interval)
				out, ok := reduceSeries(s, ssp, o.SliceDuration)
				if !ok {
					if s.impossible() != "" && !warned[s] { // every sample refused: a histogram held twice each scrape
						warned[s] = true
						r.Warnings = append(r.Warnings, impossibleWarning(ep, s))
					}
					continue
				}
				out.Source, out.Endpoint, out.Phase, out.Metric, out.Type = ep.Source, ep.URL, w.name, s.fam.name, s.typ
				out.Labels, out.Description = s.labels, s.fam.help
				out.Friendly, out.Unit = describe(s.fam.name, s.typ)
				if why := s.impossible(); why != "" {
					refuse(&out, why)
					if !warned[s] {
						warned[s] = true
						r.Warnings = append(r.Warnings, impossibleWarning(ep, s))
					}
				} else if short != "" && (s.typ == TypeCounter || s.typ == TypeHistogram) {
					refuseAll(&out, short)
					if !shortSaid {
						shortSaid = true
						r.Warnings = append(r.Warnings, uncoveredWarning(ep, short))
					}
				} else if gap != "" {
					refuseAll(&out, gap)
					if absent == nil {
						absent, absentWhy = s, gap
					} else {
						absentOthers++
					}
				}
				r.Series = append(r.Series, out)
			}
			if absent != nil {
				r.Warnings = append(r.Warnings, absentWarning(ep, absent, absentWhy, absentOthers))
			}
		}
	}
	rank := map[string]int{}
	for i, e := range r.Endpoints {
		rank[e.URL] = i
	}
	phase := map[string]int{}
	for i, w := range ws {
		phase[w.name] = i
	}
	slices.SortStableFunc(r.Series, func(a, b Series) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(rank[a.Endpoint], rank[b.Endpoint]),
			cmp.Compare(a.Metric, b.Metric), cmp.Compare(labelKey(a.Labels), labelKey(b.Labels)),
			cmp.Compare(phase[a.Phase], phase[b.Phase]))
	})
}

// labelKey orders label sets.
func labelKey(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "\x00" + l[k] + "\x00")
	}
	return b.String()
}

// reduceSeries reduces s over sp; false when s has no sample there.
func reduceSeries(s *seriesBuf, sp span, slice time.Duration) (Series, bool) {
	var out Series
	var ok bool
	switch s.typ {
	case TypeCounter:
		out.Stats, ok = counterStats(s.vals, sp, sp.ref, sp.hi)
	case TypeHistogram:
		out.Stats, out.Buckets, ok = histogramStats(s, sp, sp.ref, sp.hi)
	case TypeSummary:
		out.Stats, ok = summaryStats(s, sp)
	default:
		out.Stats, ok = gaugeStats(s.vals, sp.lo, sp.hi, true)
		if v, tw := timeWeightedAvg(s.vals, sp.times, sp.edge, sp.hi); ok && tw {
			out.Stats[StatTimeWeightedAvg] = v
		}
	}
	if ok && slice > 0 && s.typ != TypeSummary {
		out.Timeslices = timeslices(s, sp, int64(slice))
		if s.typ == TypeCounter {
			rateStats(out.Stats, out.Timeslices)
		}
	}
	finiteOnly(&out.Stats, &out.Buckets)
	for i := range out.Timeslices {
		finiteOnly(&out.Timeslices[i].Stats, &out.Timeslices[i].Buckets)
	}
	return out, ok
}

// finiteOnly drops the stats that overflowed (samples are finite, sums of
// them may not be), and the buckets if one did: JSON has no Inf or NaN.
func finiteOnly(st *map[string]float64, bs *[]Bucket) {
	for k, v := range *st {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(*st, k)
		}
	}
	for _, b := range *bs {
		if math.IsNaN(b.Count) || math.IsInf(b.Count, 0) {
			*bs = nil
			return
		}
	}
}

// gaugeStats are avg, min, max, std (n−1) and percentiles of the samples
// in vals[lo..hi], with their count when full; false without samples.
func gaugeStats(vals []float64, lo, hi int, full bool) (map[string]float64, bool) {
	var xs []float64
	for i := max(lo, 0); i <= hi && i < len(vals); i++ {
		if !math.IsNaN(vals[i]) {
			xs = append(xs, vals[i])
		}
	}
	if len(xs) == 0 {
		return nil, false
	}
	c := metrics.Compute(xs)
	st := map[string]float64{"avg": c.Avg, "min": c.Min, "max": c.Max}
	if !full {
		return st, true
	}
	st["std"], st["count"] = 0, float64(len(xs))
	if len(xs) > 1 {
		st["std"] = stats.StdDev(xs)
	}
	for i, p := range []float64{c.P1, c.P5, c.P10, c.P25, c.P50, c.P75, c.P90, c.P95, c.P99} {
		st[percentiles[i].name] = p
	}
	return st, true
}

// increase is a counter's rise over vals[from..to]: a fall is a reset (the
// counter restarted from 0), and a counter absent at from starts from 0
// (callers take from at its last sample when it has one: seriesRef,
// span.from). seen reports whether it has a sample there.
func increase(vals []float64, from, to int) (total float64, seen bool) {
	prev := 0.0
	for i := from; i <= to; i++ {
		v := vals[i]
		if math.IsNaN(v) {
			continue
		}
		if i > from {
			total += rise(prev, v)
		}
		prev, seen = v, true
	}
	return total, seen
}

// rise is how much a counter went up from prev to v: v itself after a reset.
func rise(prev, v float64) float64 {
	if v < prev {
		return v
	}
	return v - prev
}

// seconds is the time between two scrapes in seconds.
func (sp span) seconds(from, to int) float64 { return float64(sp.times[to]-sp.times[from]) / 1e9 }

// counterStats are a counter's total and rate from scrape from to scrape to.
func counterStats(vals []float64, sp span, from, to int) (map[string]float64, bool) {
	total, seen := increase(vals, from, to)
	if !seen {
		return nil, false
	}
	st := map[string]float64{"total": total, "rate": 0}
	if d := sp.seconds(from, to); d > 0 {
		st["rate"] = total / d
	}
	return st, true
}

// histDelta is a histogram's or summary's count, sum and cell deltas (a
// histogram's buckets; meaningless for a summary's quantiles) from scrape from to scrape to, resets handled; a series
// absent at from starts from 0 (as increase).
func histDelta(s *seriesBuf, from, to int) (count, sum float64, cells []float64, seen bool) {
	k := s.stride()
	cells = make([]float64, k)
	var prevCount, prevSum float64
	prev := make([]float64, k)
	for i := from; i <= to; i++ {
		if math.IsNaN(s.count[i]) || len(s.cells) < (i+1)*k {
			continue
		}
		cur := s.cells[i*k : (i+1)*k]
		if i > from {
			reset := s.count[i] < prevCount // prev* are 0 until the first sample
			count += pick(reset, s.count[i], s.count[i]-prevCount)
			sum += pick(reset, s.sum[i], s.sum[i]-prevSum)
			for j := range cells {
				cells[j] += pick(reset, cur[j], cur[j]-prev[j])
			}
		}
		prevCount, prevSum, seen = s.count[i], s.sum[i], true
		copy(prev, cur)
	}
	return count, sum, cells, seen
}

func pick(c bool, a, b float64) float64 {
	if c {
		return a
	}
	return b
}

// histogramStats are a histogram's deltas and estimated percentiles from
// scrape from to scrape to.
func histogramStats(s *seriesBuf, sp span, from, to int) (map[string]float64, []Bucket, bool) {
	count, sum, cells, seen := histDelta(s, from, to)
	if !seen {
		return nil, nil, false
	}
	buckets := make([]Bucket, len(cells))
	for j, c := range cells {
		buckets[j] = Bucket{LE: formatLE(s.bounds[j]), Count: c}
	}
	st := map[string]float64{"count": count}
	if count <= 0 {
		return st, buckets, true
	}
	st["sum"], st["avg"], st["count_rate"], st["sum_rate"] = sum, sum/count, 0, 0
	if d := sp.seconds(from, to); d > 0 {
		st["count_rate"], st["sum_rate"] = count/d, sum/d
	}
	for _, p := range percentiles {
		if v, ok := bucketQuantile(p.q, s.bounds, cells); ok {
			st[p.name+"_estimate"] = v
		}
	}
	// The bucket of the median: the resolution of every comparison with it
	// (kept in the store; the exports list AIPerf's statistics only).
	if lo, hi, _, ok := quantileBucket(0.5, s.bounds, cells); ok {
		st[StatP50BucketLower], st[StatP50BucketUpper] = lo, hi
	}
	return st, buckets, true
}

// summaryStats are a summary's count and sum deltas and its last quantiles
// in the window (they cover the server's lifetime, not the window).
func summaryStats(s *seriesBuf, sp span) (map[string]float64, bool) {
	count, sum, _, seen := histDelta(s, sp.ref, sp.hi)
	if !seen {
		return nil, false
	}
	st := map[string]float64{"count": count, "sum": sum}
	k := s.stride()
	for i := sp.hi; i >= max(sp.lo, 0); i-- {
		if math.IsNaN(s.count[i]) || len(s.cells) < (i+1)*k {
			continue
		}
		for j, q := range s.bounds {
			if v := s.cells[i*k+j]; !math.IsNaN(v) {
				st["q"+formatLE(q)] = v
			}
		}
		break
	}
	return st, true
}
