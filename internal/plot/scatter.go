package plot

import (
	"fmt"
	"math"
	"strings"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// Axis is one axis of a view: the statistic it shows and its title.
type Axis struct {
	Key    compare.Key       `json:"key"`
	Label  string            `json:"label"`
	Better compare.Direction `json:"better"`
}

// Series is one sweep (or the set of compared groups) on a scatter view.
type Series struct {
	Name   string  `json:"name"`
	Points []Point `json:"points"`
	// Frontier are the points the series' line joins: the Pareto-optimal
	// ones by increasing X (for AIPerf's scatter_line figures, every point
	// in X order).
	Frontier []Point `json:"frontier"`
}

// Scatter is a point per cell, whiskers over trials on both axes, and each
// series' frontier.
type Scatter struct {
	Name   string   `json:"name"` // file stem
	Title  string   `json:"title"`
	X      Axis     `json:"x"`
	Y      Axis     `json:"y"`
	Series []Series `json:"series"`
	// Line says in the legend what the lines join ("" for "line: its
	// frontier").
	Line string `json:"line,omitempty"`
}

var (
	keyTTFTp99      = compare.Key{Metric: metrics.TagTTFT, Stat: "p99"}
	keyLatencyP99   = compare.Key{Metric: metrics.TagRequestLatency, Stat: "p99"}
	keyRequestRate  = compare.Key{Metric: metrics.TagRequestThroughput, Stat: "avg"}
	keyOutputTokens = compare.Key{Metric: metrics.TagOutputTokenThroughput, Stat: "avg"}
	keyPerUser      = compare.Key{Metric: metrics.TagPerUserThroughput, Stat: "avg"}
)

// scatterSpec names a scatter view and its axes. AIPerf's multi-run plots
// have the same names, less "per GPU" (a run here does not know how many
// GPUs served it).
type scatterSpec struct {
	name, title string
	x, y        compare.Key
}

var scatterSpecs = []scatterSpec{
	{"ttft_vs_throughput", "Request throughput against TTFT p99", keyTTFTp99, keyRequestRate},
	{"pareto_curve_throughput_vs_latency", "Output token throughput against TTFT p99", keyTTFTp99, keyOutputTokens},
	{"pareto_curve_throughput_vs_interactivity", "Interactivity: total against per-user output token throughput", keyPerUser, keyOutputTokens},
}

// Keys are the statistics the views need, for loading runs from the store.
func Keys() []compare.Key {
	keys := append([]compare.Key{}, compare.DefaultKeys...)
	return append(keys, keyLatencyP99, keyPerUser)
}

// table is one compared side's estimates by metric key, with units: a
// sweep's cells or the compared groups.
type table struct {
	name   string
	labels []string
	units  map[string]string
	values map[string][]compare.Estimate // by key, one per label
}

func sweepTable(name string, rep *compare.SweepReport) table {
	t := table{name: name, units: map[string]string{}, values: map[string][]compare.Estimate{}}
	for _, c := range rep.Cells {
		t.labels = append(t.labels, ShortLabel(c.Label, c.Params))
	}
	for j, m := range rep.Metrics {
		t.units[m.Metric] = m.Unit
		for _, c := range rep.Cells {
			t.values[m.Metric] = append(t.values[m.Metric], c.Values[j])
		}
	}
	return t
}

func groupsTable(rep *compare.GroupsReport) table {
	t := table{name: "runs", units: map[string]string{}, values: map[string][]compare.Estimate{}}
	for _, g := range rep.Groups {
		t.labels = append(t.labels, g.Label)
	}
	for _, m := range rep.Metrics {
		t.units[m.Metric], t.values[m.Metric] = m.Unit, m.Values
	}
	return t
}

// has reports whether some label has a value of k.
func (t table) has(k compare.Key) bool {
	for _, e := range t.values[k.String()] {
		if e.N > 0 {
			return true
		}
	}
	return false
}

// scatters builds every scatter view over the tables (one series each).
// Without TTFT (not streaming) the latency axis is the request latency p99.
func scatters(tables []table) []Scatter {
	var out []Scatter
	for _, spec := range scatterSpecs {
		x := spec.x
		if x == keyTTFTp99 && !anyHas(tables, x) {
			x = keyLatencyP99
		}
		if !anyHas(tables, x) || !anyHas(tables, spec.y) {
			continue
		}
		sc := Scatter{Name: spec.name, Title: spec.title, X: axisOf(x, tables), Y: axisOf(spec.y, tables)}
		for _, t := range tables {
			sc.Series = append(sc.Series, seriesOf(t, sc.X, sc.Y))
		}
		out = append(out, sc)
	}
	return out
}

func anyHas(tables []table, k compare.Key) bool {
	for _, t := range tables {
		if t.has(k) {
			return true
		}
	}
	return false
}

// seriesOf is a table's points on two axes, cells without both left out.
func seriesOf(t table, x, y Axis) Series {
	s := Series{Name: t.name}
	xs, ys := t.values[x.Key.String()], t.values[y.Key.String()]
	for i, label := range t.labels {
		if i >= len(xs) || i >= len(ys) || xs[i].N == 0 || ys[i].N == 0 ||
			math.IsNaN(float64(xs[i].Mean)) || math.IsNaN(float64(ys[i].Mean)) {
			continue
		}
		s.Points = append(s.Points, Point{Label: label, X: intervalOf(xs[i]), Y: intervalOf(ys[i]), Trials: min(xs[i].N, ys[i].N)})
	}
	s.Frontier = Frontier(s.Points, x.Better, y.Better)
	return s
}

func axisOf(k compare.Key, tables []table) Axis {
	unit := ""
	for _, t := range tables {
		if u := t.units[k.String()]; u != "" {
			unit = u
			break
		}
	}
	return Axis{Key: k, Label: axisLabel(k, unit), Better: compare.DirectionOf(k)}
}

// axisLabel titles an axis: "TTFT p99 (ms)", "request throughput (requests/sec)".
func axisLabel(k compare.Key, unit string) string {
	name, ok := shortNames[k.Metric]
	if !ok {
		name = k.Metric
	}
	if k.Stat != "avg" && k.Stat != "value" {
		name += " " + k.Stat
	}
	if unit != "" {
		name = fmt.Sprintf("%s (%s)", name, unit)
	}
	return name
}

// ShortLabel names a cell in figures, where its label is too long: its
// parameters' values, "c=4 isl=512" (short names for the usual options); a
// scenario cell (named by its script) keeps its name.
func ShortLabel(label string, params []plan.Param) string {
	if len(params) == 0 || label != plan.CellLabel(params) {
		return label
	}
	parts := make([]string, len(params))
	for i, p := range params {
		name, ok := paramNames[p.Name]
		if !ok {
			name = p.Name
		}
		v := fmt.Sprint(p.Value)
		if p.Value == nil {
			v = "-"
		}
		parts[i] = name + "=" + v
	}
	return strings.Join(parts, " ")
}

var paramNames = map[string]string{
	"concurrency": "c", "request_rate": "rate", "synthetic_input_tokens_mean": "isl", "output_tokens_mean": "osl",
	"synthetic_input_tokens_stddev": "isl_sd", "output_tokens_stddev": "osl_sd",
}

var shortNames = map[string]string{
	metrics.TagTTFT: "TTFT", metrics.TagITL: "ITL", metrics.TagRequestLatency: "request latency",
	metrics.TagOutputTokenThroughput: "output token throughput", metrics.TagRequestThroughput: "request throughput",
	metrics.TagPerUserThroughput: "output token throughput per user", metrics.TagErrorRequestCount: "errors",
	tagPerGPU: "output token throughput per GPU",
}
