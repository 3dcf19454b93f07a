package plot

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/artifacts"
	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/metrics"
)

// tagPerGPU is AIPerf's derived output token throughput per GPU: the run's
// output token throughput over the GPUs its telemetry saw.
const tagPerGPU = "output_token_throughput_per_gpu"

// comparison is one of AIPerf's multi-run figures (default_plot_config.yaml's
// multi_run_plots): a point per run, grouped into a series per model and
// labelled with its concurrency; a pareto figure draws each series'
// frontier, a scatter_line one joins its points in x order.
type comparison struct {
	name, title    string
	x, y           compare.Key
	pareto         bool
	groups, labels string // columns: model, concurrency, run_name, experiment_group
}

// comparisons are AIPerf's multi_run_defaults, in its order.
var comparisons = []comparison{
	{"pareto_curve_throughput_per_gpu_vs_latency", "Pareto curve: token throughput per GPU vs latency",
		compare.Key{Metric: metrics.TagRequestLatency, Stat: "avg"}, compare.Key{Metric: tagPerGPU, Stat: "avg"}, true, "model", "concurrency"},
	{"pareto_curve_throughput_per_gpu_vs_interactivity", "Pareto curve: token throughput per GPU vs interactivity",
		compare.Key{Metric: tagPerGPU, Stat: "avg"}, compare.Key{Metric: metrics.TagPerUserThroughput, Stat: "avg"}, false, "model", "concurrency"},
	{"ttft_vs_throughput", "TTFT vs throughput",
		compare.Key{Metric: metrics.TagTTFT, Stat: "avg"}, compare.Key{Metric: metrics.TagRequestThroughput, Stat: "avg"}, false, "model", "concurrency"},
}

// statOf is a run's value of k, with its interval: the per-GPU throughput
// is derived from the output token throughput and the GPU count.
func statOf(r *artifacts.Run, k compare.Key) (Interval, bool) {
	if k.Metric == "concurrency" {
		c := float64(r.Concurrency)
		return Interval{Mean: c, Low: math.NaN(), High: math.NaN()}, r.Concurrency > 0
	}
	div := 1.0
	if k.Metric == tagPerGPU {
		if r.GPUs == 0 {
			return Interval{}, false
		}
		k.Metric, div = metrics.TagOutputTokenThroughput, float64(r.GPUs)
	}
	v, ok := r.Stat(k.Metric, k.Stat)
	if !ok || math.IsNaN(v.Mean) {
		return Interval{}, false
	}
	return Interval{Mean: v.Mean / div, Low: v.Low / div, High: v.High / div}, true
}

// unitOf is the unit of k among runs.
func unitOf(runs []*artifacts.Run, k compare.Key) string {
	if k.Metric == tagPerGPU {
		return "tokens/sec/gpu"
	}
	for _, r := range runs {
		if u := r.Units[k.Metric]; u != "" {
			return u
		}
	}
	return ""
}

// comparisonOf builds one of AIPerf's multi-run figures over runs (labels
// name the runs whose concurrency is unknown); nil when no run has both
// values.
func comparisonOf(c comparison, runs []*artifacts.Run, labels []string) *Scatter {
	sc := &Scatter{Name: c.name, Title: c.title, Line: "line: its frontier",
		X: Axis{Key: c.x, Label: axisLabel(c.x, unitOf(runs, c.x)), Better: compare.DirectionOf(c.x)},
		Y: Axis{Key: c.y, Label: axisLabel(c.y, unitOf(runs, c.y)), Better: compare.DirectionOf(c.y)}}
	if !c.pareto {
		sc.Line = "line: in x order"
	}
	bySeries := map[string]int{}
	for i, r := range runs {
		x, okx := statOf(r, c.x)
		y, oky := statOf(r, c.y)
		if !okx || !oky {
			continue
		}
		group := column(r, labels[i], c.groups)
		j, ok := bySeries[group]
		if !ok {
			j, bySeries[group] = len(sc.Series), len(sc.Series)
			sc.Series = append(sc.Series, Series{Name: group})
		}
		sc.Series[j].Points = append(sc.Series[j].Points, Point{Label: column(r, labels[i], c.labels), X: x, Y: y, Trials: r.N})
	}
	if len(sc.Series) == 0 {
		return nil
	}
	slices.SortStableFunc(sc.Series, func(a, b Series) int { return cmp.Compare(a.Name, b.Name) })
	for i := range sc.Series {
		s := &sc.Series[i]
		if c.pareto {
			s.Frontier = Frontier(s.Points, sc.X.Better, sc.Y.Better)
			continue
		}
		s.Frontier = slices.Clone(s.Points)
		slices.SortStableFunc(s.Frontier, func(a, b Point) int { return cmp.Compare(a.X.Mean, b.X.Mean) })
	}
	return sc
}

// column is a run's value of a grouping or labelling column: its model
// ("runs" when unknown), its concurrency (its label when unknown), or its
// label (run_name; experiment_group, as AIPerf without a classification).
func column(r *artifacts.Run, label, col string) string {
	switch col {
	case "model":
		return cmp.Or(r.Model, "runs")
	case "concurrency":
		if r.Concurrency > 0 {
			return strconv.Itoa(r.Concurrency)
		}
	}
	return label
}

// runsTable is our views' table of a set of runs: a label each, every
// statistic of Keys with the runs' intervals (an aggregate's over its
// trials).
func runsTable(name string, runs []*artifacts.Run, labels []string) table {
	t := table{name: name, labels: labels, units: map[string]string{}, values: map[string][]compare.Estimate{}}
	for _, k := range Keys() {
		if u := unitOf(runs, k); u != "" {
			t.units[k.String()] = u
		}
		for _, r := range runs {
			e := compare.Estimate{Mean: compare.Num(math.NaN()), CILow: compare.Num(math.NaN()), CIHigh: compare.Num(math.NaN())}
			if v, ok := statOf(r, k); ok {
				e = compare.Estimate{N: r.N, Mean: compare.Num(v.Mean), CILow: compare.Num(v.Low), CIHigh: compare.Num(v.High)}
			}
			t.values[k.String()] = append(t.values[k.String()], e)
		}
	}
	return t
}
