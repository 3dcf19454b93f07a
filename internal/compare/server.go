package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/store"
)

// serverValue is k's value over a run's series: the first family of an
// alias that has one, or the named family.
func serverValue(series []servermetrics.Series, k Key) (float64, bool) {
	v, _, ok := serverValueFrom(series, k)
	return v, ok
}

// serverValueFrom is serverValue with the family that answered.
func serverValueFrom(series []servermetrics.Series, k Key) (float64, string, bool) {
	source, name, _ := serverSource(k.Metric)
	a := findAlias(source, name)
	if a == nil {
		v, ok := aggregate(selectSeries(series, source, name), k.Stat)
		return v, name, ok
	}
	for _, f := range a.from {
		if v, ok := f.value(series, source, k.Stat); ok {
			if f.per != "" {
				return v, f.metric + " / " + f.per, true
			}
			return v, f.metric, true
		}
	}
	return 0, "", false
}

func (f family) value(series []servermetrics.Series, source, stat string) (float64, bool) {
	sel := selectSeries(series, source, f.metric)
	if f.per != "" {
		hits, ok := aggregate(sel, "delta")
		queries, ok2 := aggregate(selectSeries(series, source, f.per), "delta")
		if !ok || !ok2 || queries <= 0 {
			return 0, false
		}
		return 100 * hits / queries, true
	}
	if f.stat != "" {
		stat = f.stat
	}
	v, ok := aggregate(sel, stat)
	if !ok {
		return 0, false
	}
	if f.ms {
		v *= toMs(sel[0].Unit)
	}
	if f.scale != 0 {
		v *= f.scale
	}
	return v, true
}

// toMs is the factor from a duration family's unit to ms: its base unit,
// seconds, unless the collector says ms.
func toMs(unit string) float64 {
	switch strings.ToLower(unit) {
	case "ms", "millisecond", "milliseconds":
		return 1
	}
	return 1000
}

// selectSeries picks the series of one family. A counter is named as
// AIPerf names it, without _total (servermetrics.AIPerfName: the collector,
// the exports and the store all do); the name with it finds it too.
func selectSeries(series []servermetrics.Series, source, metric string) []*servermetrics.Series {
	var out []*servermetrics.Series
	for i := range series {
		s := &series[i]
		if s.Source == source && (s.Metric == metric ||
			s.Type == servermetrics.TypeCounter && servermetrics.AIPerfName(metric, s.Type) == servermetrics.AIPerfName(s.Metric, s.Type)) {
			out = append(out, s)
		}
	}
	return out
}

// isGauge tells a gauge (or an untyped family, reduced as one).
func isGauge(s *servermetrics.Series) bool {
	return s.Type == servermetrics.TypeGauge || s.Type == servermetrics.TypeUnknown
}

func isHistogram(s *servermetrics.Series) bool {
	return s.Type == servermetrics.TypeHistogram || s.Type == servermetrics.TypeSummary
}

// aggregate reduces the series of one family to one value of stat, by the
// rules in serverkey.go's opening comment; false when no series has it.
func aggregate(sel []*servermetrics.Series, stat string) (float64, bool) {
	var (
		vals   []float64
		counts []float64 // of histograms with observations, for avg and quantiles
		sums   []float64
		hist   bool
		sumsOK = true
	)
	for _, s := range sel {
		if isHistogram(s) {
			hist = true
			n := s.Stats["count"]
			if n <= 0 && (stat == "avg" || strings.HasPrefix(stat, "p")) {
				continue // no observations in the phase: no average or quantile
			}
			if v, ok := statOf(s, stat); ok {
				total, ok := s.Stats["sum"]
				sumsOK = sumsOK && ok
				vals, counts, sums = append(vals, v), append(counts, n), append(sums, total)
			}
			continue
		}
		if v, ok := statOf(s, stat); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return 0, false
	}
	switch {
	case stat == "delta" || stat == "rate" || stat == "count" || stat == "sum":
		return sum(vals), true
	case stat == "max" || stat == "std":
		return slices.Max(vals), true
	case stat == "min":
		return slices.Min(vals), true
	case stat == "avg" && hist && sumsOK:
		return sum(sums) / sum(counts), true
	case stat == "avg":
		return sum(vals) / float64(len(vals)), true
	case hist: // a quantile
		weighted := 0.0
		for i, v := range vals {
			weighted += v * counts[i]
		}
		return weighted / sum(counts), true
	}
	return slices.Max(vals), true // a gauge's quantile
}

func sum(vs []float64) float64 {
	t := 0.0
	for _, v := range vs {
		t += v
	}
	return t
}

// hasServer tells whether a group has server metrics of the families asked
// for in one of its complete runs.
func hasServer(runs []store.RunRow) bool {
	return slices.ContainsFunc(runs, func(r store.RunRow) bool { return r.Status == result.StatusComplete && len(r.Server) > 0 })
}

// serverRows picks, of candidate server keys, those to add to a default
// view: none unless every side has server metrics, then those some run has.
func serverRows(candidates []Key, sides ...[]store.RunRow) []Key {
	for _, runs := range sides {
		if !hasServer(runs) {
			return nil
		}
	}
	var out []Key
	for _, k := range candidates {
		if slices.ContainsFunc(sides, func(runs []store.RunRow) bool { return hasValue(runs, k) }) {
			out = append(out, k)
		}
	}
	return out
}

// clientMinusServerTTFT is a group's client TTFT p50 minus the server's,
// over its complete runs that have both, and the widest bucket (in ms) the
// server's p50 was interpolated in over those runs: the gap's resolution
// (zero bounds when no run stored it).
func clientMinusServerTTFT(runs []store.RunRow, confidence float64) (Estimate, Bucket) {
	var (
		diffs  []float64
		bucket Bucket
	)
	for i := range runs {
		r := &runs[i]
		if r.Status != result.StatusComplete {
			continue
		}
		client, ok := r.Stat(clientTTFTp50.Metric, clientTTFTp50.Stat)
		server, ok2 := serverValue(r.Server, serverTTFTp50)
		if !ok || !ok2 {
			continue
		}
		diffs = append(diffs, client-server)
		lo, ok := serverValue(r.Server, Key{serverTTFTp50.Metric, servermetrics.StatP50BucketLower})
		hi, ok2 := serverValue(r.Server, Key{serverTTFTp50.Metric, servermetrics.StatP50BucketUpper})
		if ok && ok2 && (bucket == Bucket{} || hi-lo > bucket.HighMs-bucket.LowMs) {
			bucket = Bucket{LowMs: lo, HighMs: hi}
		}
	}
	return newEstimate(diffs, confidence), bucket
}

// unresolved reports a client-minus-server TTFT gap smaller than the
// width of the bucket the server's p50 was interpolated in: the server's
// p50 could lie anywhere in it, so the gap's size, even its sign, is not
// known.
func unresolved(gap Estimate, b Bucket) bool {
	return b != (Bucket{}) && math.Abs(float64(gap.Mean)) < b.HighMs-b.LowMs
}

// Bucket is the histogram bucket a server quantile was interpolated in.
type Bucket struct {
	LowMs  float64 `json:"low_ms"`
	HighMs float64 `json:"high_ms"`
}

// Headline is one line of a run's server account in `aiperf runs show`.
type Headline struct {
	Key    string  `json:"key"`    // e.g. server.ttft.p50
	Family string  `json:"family"` // the family it was read from ("hits / queries" for a hit rate)
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
}

// ServerHeadlines evaluates HeadlineServerKeys over a run's profiling-phase
// series, keeping those the run has.
func ServerHeadlines(series []servermetrics.Series) []Headline {
	var out []Headline
	for _, k := range HeadlineServerKeys {
		if v, f, ok := serverValueFrom(series, k); ok && !math.IsNaN(v) {
			out = append(out, Headline{Key: k.String(), Family: f, Value: v, Unit: serverUnit(k)})
		}
	}
	return out
}

// CheckServerKeys refuses a family key (not an alias) that no compared run
// has, naming the families they have (listed by known, called only then),
// and one whose statistic the family does not offer, naming those it
// does. An alias that no run answers is only noted under the table, as a
// client statistic the runs lack is.
func CheckServerKeys(keys []Key, runs []store.RunRow, known func() ([]store.ServerMetric, error)) error {
	for _, k := range keys {
		if !isServerKey(k) || aliasOf(k) != nil {
			continue
		}
		source, name, _ := serverSource(k.Metric)
		var sel []*servermetrics.Series
		for i := range runs {
			sel = append(sel, selectSeries(runs[i].Server, source, name)...)
		}
		if len(sel) == 0 {
			return unknownFamily(k, source, name, known)
		}
		if !slices.ContainsFunc(sel, func(s *servermetrics.Series) bool { _, ok := statOf(s, k.Stat); return ok }) {
			var offered []string
			for _, s := range sel {
				for st := range s.Stats {
					if st = keyStat(s, st); st != "" && !slices.Contains(offered, st) {
						offered = append(offered, st)
					}
				}
			}
			slices.Sort(offered)
			why := ""
			if k.Stat == "avg" && isGauge(sel[0]) {
				why = " (a gauge's avg is its average over time, which runs stored by older versions lack)"
			}
			return fmt.Errorf("%s: %s is a %s: its statistics are %s%s", k, sel[0].Metric, sel[0].Type, strings.Join(offered, ", "), why)
		}
	}
	return nil
}

func unknownFamily(k Key, source, name string, known func() ([]store.ServerMetric, error)) error {
	ms, err := known()
	if err != nil {
		return err
	}
	var names []string
	for _, m := range ms {
		if m.Source == source {
			names = append(names, m.Metric)
		}
	}
	candidates := append(slices.Clone(names), aliasNames(source)...)
	have := "no " + source + " metrics"
	if len(names) > 0 {
		have = fmt.Sprintf("%s metrics %s", source, strings.Join(names, ", "))
	}
	return fmt.Errorf("%s: unknown %s metric %q%s: the compared runs have %s; the aliases are %s",
		k, source, name, plan.Suggest(name, candidates), have, aliasList(source))
}

// keyStat is the name a key gives a series' statistic: statOf's inverse
// ("" for a gauge's stored avg, which no key reads).
func keyStat(s *servermetrics.Series, stat string) string {
	switch {
	case stat == "total":
		return "delta"
	case stat == servermetrics.StatTimeWeightedAvg:
		return "avg"
	case stat == "avg" && isGauge(s):
		return ""
	}
	return strings.TrimSuffix(stat, "_estimate")
}

// statOf is a series' statistic as a key names it: the collector names a
// counter's increase "total" (AIPerf's export name, "delta" here) and a
// histogram's quantiles "p50_estimate" (AIPerf's; "p50" here). A gauge's
// avg is its average over time (servermetrics.StatTimeWeightedAvg), never
// the stored avg, AIPerf's mean of the samples, which weighs the marks
// before and after the load like the scrapes during it: a run stored
// before the collector kept the former has no gauge avg, rather than one
// of another meaning.
func statOf(s *servermetrics.Series, stat string) (float64, bool) {
	if stat == "avg" && isGauge(s) {
		v, ok := s.Stats[servermetrics.StatTimeWeightedAvg]
		return v, ok
	}
	if v, ok := s.Stats[stat]; ok {
		return v, true
	}
	switch {
	case stat == "delta":
		v, ok := s.Stats["total"]
		return v, ok
	case strings.HasPrefix(stat, "p"):
		v, ok := s.Stats[stat+"_estimate"]
		return v, ok
	}
	return 0, false
}
