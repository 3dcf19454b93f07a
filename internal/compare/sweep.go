package compare

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// SweepReport is a sweep as a row per cell: its parameters, each statistic
// as mean ± confidence half width over the cell's trials, the
// Pareto-optimal cells and the best cell per statistic.
type SweepReport struct {
	Sweep           store.Sweep  `json:"sweep"`
	ConfidenceLevel float64      `json:"confidence_level"`
	Parameters      []string     `json:"parameters"`
	Metrics         []MetricInfo `json:"metrics"`
	Cells           []SweepCell  `json:"cells"`
	Pareto          ParetoAxes   `json:"pareto"`
	Best            []BestCell   `json:"best"`
	Notes           []string     `json:"notes,omitempty"`
}

// MetricInfo describes a compared statistic.
type MetricInfo struct {
	Metric string    `json:"metric"` // metric.stat
	Unit   string    `json:"unit"`
	Better Direction `json:"better"`
}

// SweepCell is one row of a SweepReport.
type SweepCell struct {
	ID            string       `json:"id"`
	Label         string       `json:"label"`
	Index         int          `json:"index"`
	Params        []plan.Param `json:"params"`
	Trials        int          `json:"trials"` // complete trials, those aggregated
	Runs          int          `json:"runs"`   // stored trials, any status
	Values        []Estimate   `json:"values"` // one per metric
	ParetoOptimal bool         `json:"pareto_optimal"`
	// ClientBound says a complete trial of the cell was CLIENT-BOUND: the
	// client, not the server, shaped its numbers, so the cell is neither a
	// best cell nor on (or beating others off) the Pareto front.
	ClientBound bool `json:"client_bound,omitempty"`
	// Converged says why the cell stopped before its planned trials under
	// the sweep's convergence criterion ("" when it did not), after
	// ConvergedAfter of them.
	Converged      string `json:"converged,omitempty"`
	ConvergedAfter int    `json:"converged_after,omitempty"`
}

// ParetoAxes names the statistics the Pareto front is computed on.
type ParetoAxes struct {
	Throughput string `json:"throughput"` // maximized
	Latency    string `json:"latency"`    // minimized
}

// BestCell is the best cell for one statistic.
type BestCell struct {
	Metric string `json:"metric"`
	Cell   string `json:"cell"` // label
	Mean   Num    `json:"mean"`
}

// Sweep builds the report of one sweep (from store.SweepRuns).
func Sweep(s *store.SweepRuns, opt Options) *SweepReport {
	opt = opt.withDefaults()
	rep := &SweepReport{Sweep: s.Sweep, ConfidenceLevel: opt.ConfidenceLevel}
	var all []store.RunRow
	for _, c := range s.Cells {
		all = append(all, c.Runs...)
		for _, p := range c.Params {
			if !slices.Contains(rep.Parameters, p.Name) {
				rep.Parameters = append(rep.Parameters, p.Name)
			}
		}
	}
	// The default view adds goodput and the prefix-cache hit rate when cells
	// have them.
	keys := slices.Clone(opt.Keys)
	for _, k := range []Key{goodputKey, prefixHitRate} {
		if opt.defaulted && slices.ContainsFunc(s.Cells, func(c store.Cell) bool { return hasValue(c.Runs, k) }) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		rep.Metrics = append(rep.Metrics, MetricInfo{Metric: k.String(), Unit: unitOf(k, all), Better: DirectionOf(k)})
	}
	for _, c := range s.Cells {
		row := SweepCell{ID: c.ID, Label: c.Label, Index: c.Index, Params: c.Params, Runs: len(c.Runs), Trials: completeRuns(c.Runs),
			ClientBound: slices.ContainsFunc(c.Runs, func(r store.RunRow) bool { return r.Status == result.StatusComplete && r.ClientBound }),
			Converged:   c.Converged, ConvergedAfter: c.ConvergedAfter}
		for _, k := range keys {
			row.Values = append(row.Values, estimateOf(c.Runs, k, opt.ConfidenceLevel))
		}
		rep.Cells = append(rep.Cells, row)
		rep.Notes = append(rep.Notes, runNotes(c.Label, c.Runs)...)
		rep.Notes = append(rep.Notes, leftOutNotes(c.Label, c.Runs, keys)...)
		rep.Notes = append(rep.Notes, failedCountNotes(c.Label, c.Runs, keys)...)
		if c.Converged != "" {
			rep.Notes = append(rep.Notes, fmt.Sprintf("converged: %s after %d of %d trials (%s)", c.Label, c.ConvergedAfter, s.Sweep.Trials, c.Converged))
		}
	}
	rep.markPareto(s, opt.ConfidenceLevel)
	rep.findBest()
	return rep
}

// markPareto flags the cells no other cell beats on both axes: at least as
// much throughput and at most as much latency, strictly better on one.
func (r *SweepReport) markPareto(s *store.SweepRuns, confidence float64) {
	latency := paretoLatency
	for _, c := range s.Cells {
		if e := estimateOf(c.Runs, paretoThroughput, confidence); e.N > 0 &&
			estimateOf(c.Runs, paretoLatency, confidence).N == 0 {
			latency = paretoLatencyElse // some cell has no TTFT: not streaming
		}
	}
	r.Pareto = ParetoAxes{Throughput: paretoThroughput.String(), Latency: latency.String()}
	type point struct {
		cell     int
		thr, lat float64
	}
	var points []point
	for i, c := range s.Cells {
		thr, lat := estimateOf(c.Runs, paretoThroughput, confidence), estimateOf(c.Runs, latency, confidence)
		if thr.N > 0 && lat.N > 0 && !r.Cells[i].ClientBound {
			points = append(points, point{i, thr.agg.Mean, lat.agg.Mean})
		}
	}
	for _, p := range points {
		dominated := false
		for _, q := range points {
			if q.thr >= p.thr && q.lat <= p.lat && (q.thr > p.thr || q.lat < p.lat) {
				dominated = true
				break
			}
		}
		r.Cells[p.cell].ParetoOptimal = !dominated
	}
}

// findBest picks, for every statistic with a better direction, the cell
// with the best mean (the first on ties); none when every cell has the same.
func (r *SweepReport) findBest() {
	for j, m := range r.Metrics {
		best, spread := -1, false
		for i, c := range r.Cells {
			e := c.Values[j]
			if e.N == 0 || c.ClientBound {
				continue
			}
			if best >= 0 && e.agg.Mean != r.Cells[best].Values[j].agg.Mean {
				spread = true
			}
			if best < 0 || improves(e.agg.Mean, r.Cells[best].Values[j].agg.Mean, m.Better) {
				best = i
			}
		}
		if spread && m.Better != Neutral {
			r.Best = append(r.Best, BestCell{Metric: m.Metric, Cell: r.Cells[best].Label, Mean: r.Cells[best].Values[j].Mean})
		}
	}
}

func improves(v, than float64, d Direction) bool {
	if d == HigherIsBetter {
		return v > than
	}
	return v < than
}

// Table lays the report out as a row per cell. A search's table is a row
// per probe, numbered as its search_iter_NNNN directory, with short titles
// and no Pareto column (the search's answer is its verdicts, printed
// beside it), so that it fits an 80-column terminal.
func (r *SweepReport) Table() Table {
	probes := r.Sweep.Kind == store.KindSearch
	kind := map[bool]string{false: "Sweep", true: "Search"}[probes]
	t := Table{Title: fmt.Sprintf("%s %q (id %d, %s), %g%% confidence", kind, r.Sweep.Name, r.Sweep.ID, r.Sweep.Status, r.ConfidenceLevel*100)}
	params := r.Parameters
	// Scenario cells are named by the script: show the names too.
	named := len(params) == 0 || slices.ContainsFunc(r.Cells, func(c SweepCell) bool { return c.Label != plan.CellLabel(c.Params) })
	switch {
	case probes:
		t.Header, t.Align = append(t.Header, "probe"), "r"
	case named:
		t.Header, t.Align = append(t.Header, "cell"), "l"
	}
	for _, name := range params {
		t.Header = append(t.Header, paramHeader(name, probes))
	}
	t.Align += strings.Repeat("r", len(params))
	t.Header = append(t.Header, "trials")
	for _, m := range r.Metrics {
		t.Header = append(t.Header, metricHeader(m))
	}
	t.Align += strings.Repeat("r", len(r.Metrics)+1)
	if !probes {
		t.Header, t.Align = append(t.Header, "pareto"), t.Align+"l"
	}
	for _, c := range r.Cells {
		t.Rows = append(t.Rows, r.row(c, params, named, probes))
	}
	bound := slices.ContainsFunc(r.Cells, func(c SweepCell) bool { return c.ClientBound })
	if probes { // short lines, as the table
		t.Notes = []string{"values: mean ± confidence half width over complete trials",
			"*: the column's best probe, passed or not (the answer is its verdicts)",
			"trials: complete/planned when some failed; probe N ran in search_iter_000N"}
		if bound {
			t.Notes[1] += "; a CLIENT-BOUND probe gets none"
		}
	} else {
		t.Notes = []string{"values: mean ± confidence half width over complete trials; trials: complete/planned when some are missing or failed",
			"*: best cell for the metric; pareto: not beaten on both " + r.Pareto.Throughput + " (higher) and " + r.Pareto.Latency + " (lower)"}
		if bound {
			t.Notes[1] += "; a client-bound cell (a CLIENT-BOUND trial: the client shaped its numbers) is neither"
		}
	}
	t.Notes = append(t.Notes, r.Notes...)
	return t
}

// row is cell c's row of the table: its name or probe number, parameters,
// trials, values and (but for a search) its Pareto mark.
func (r *SweepReport) row(c SweepCell, params []string, named, probes bool) []string {
	var row []string
	switch {
	case probes:
		row = append(row, strconv.Itoa(c.Index))
	case named:
		row = append(row, c.Label)
	}
	for _, name := range params {
		row = append(row, paramValue(c.Params, name))
	}
	planned := r.Sweep.Trials
	if c.Converged != "" { // the rest were not needed, not lost (a note says so)
		planned = c.ConvergedAfter
	}
	trials := strconv.Itoa(c.Trials)
	if c.Runs != c.Trials || c.Runs < planned {
		trials = fmt.Sprintf("%d/%d", c.Trials, max(c.Runs, planned))
	}
	row = append(row, trials)
	for j, e := range c.Values {
		cell := e.format()
		if r.isBest(j, c.Label) {
			cell += " *"
		}
		row = append(row, cell)
	}
	if !probes {
		row = append(row, map[bool]string{true: "yes"}[c.ParetoOptimal]+map[bool]string{true: "client-bound"}[c.ClientBound])
	}
	return row
}

func (r *SweepReport) isBest(metric int, label string) bool {
	for _, b := range r.Best {
		if b.Metric == r.Metrics[metric].Metric && b.Cell == label {
			return true
		}
	}
	return false
}

// metricHeader is a metric's column title in the sweep view, which has a
// column per metric and would not fit a terminal with full keys:
// "TTFT p99 (ms)", "req/s". JSON output keeps the full keys.
func metricHeader(m MetricInfo) string {
	i := strings.LastIndex(m.Metric, ".")
	tag, stat := m.Metric[:i], m.Metric[i+1:]
	name, ok := shortNames[tag]
	if a := aliasOf(Key{tag, stat}); a != nil {
		name, ok = a.short, true
	}
	if !ok {
		name = tag
	}
	if _, scalar := scalarNames[tag]; scalar && (stat == "avg" || stat == "value") {
		return name
	}
	if m.Unit == "" {
		return name + " " + stat
	}
	return name + " " + stat + " (" + m.Unit + ")"
}

// paramHeader titles a parameter column with the option's short alias
// (isl, osl) when it has one; a search's probes table, narrower, also
// shortens concurrency and request_rate (conc, rate).
func paramHeader(name string, search bool) string {
	if short, ok := map[string]string{
		"synthetic_input_tokens_mean": "isl", "synthetic_input_tokens_stddev": "isl_stddev",
		"output_tokens_mean": "osl", "output_tokens_stddev": "osl_stddev",
	}[name]; ok {
		return short
	}
	if short, ok := map[string]string{"concurrency": "conc", "request_rate": "rate"}[name]; ok && search {
		return short
	}
	return name
}

// shortNames abbreviate metric tags in column titles.
var shortNames = map[string]string{
	metrics.TagTTFT: "TTFT", metrics.TagTTST: "TTST", metrics.TagTTFO: "TTFO", metrics.TagITL: "ITL",
	metrics.TagICL: "ICL", metrics.TagRequestLatency: "latency", metrics.TagPerUserThroughput: "tok/s/user",
	metrics.TagISL: "ISL", metrics.TagOSL: "OSL", metrics.TagSendLag: "send lag",
	metrics.TagOutputTokenThroughput: "output tok/s", metrics.TagTotalTokenThroughput: "total tok/s",
	metrics.TagRequestThroughput: "req/s", metrics.TagRequestCount: "requests", metrics.TagErrorRequestCount: "errors",
	metrics.TagBenchmarkDuration: "duration (s)",
}

// scalarNames are the metrics whose single value needs no statistic or unit
// in its title.
var scalarNames = map[string]struct{}{
	metrics.TagOutputTokenThroughput: {}, metrics.TagTotalTokenThroughput: {}, metrics.TagRequestThroughput: {},
	metrics.TagRequestCount: {}, metrics.TagErrorRequestCount: {}, metrics.TagBenchmarkDuration: {},
	prefixHitRate.Metric: {},
}

// paramValue renders the named parameter of a cell ("" when absent).
func paramValue(params []plan.Param, name string) string {
	for _, p := range params {
		if p.Name != name {
			continue
		}
		switch v := p.Value.(type) {
		case nil:
			return "-" // unset, e.g. no warmup
		case float64:
			return strconv.FormatFloat(v, 'g', -1, 64)
		case string:
			return v
		}
		b, _ := json.Marshal(p.Value)
		return string(b)
	}
	return ""
}

// SweepDiffReport compares two sweeps cell by cell, cells matched by their
// parameters.
type SweepDiffReport struct {
	A                 store.Sweep `json:"a"`
	B                 store.Sweep `json:"b"`
	ConfidenceLevel   float64     `json:"confidence_level"`
	Cells             []CellDiff  `json:"cells"`
	OnlyA             []string    `json:"only_in_a,omitempty"` // cell labels
	OnlyB             []string    `json:"only_in_b,omitempty"`
	ConfigDifferences []string    `json:"config_differences,omitempty"`
	Notes             []string    `json:"notes,omitempty"`
}

// CellDiff is one matched cell.
type CellDiff struct {
	Label   string           `json:"label"` // in sweep A
	Params  []plan.Param     `json:"params"`
	Metrics []CellDiffMetric `json:"metrics"`
}

// CellDiffMetric is one statistic of a matched cell in both sweeps.
type CellDiffMetric struct {
	MetricInfo
	A      Estimate `json:"a"`
	B      Estimate `json:"b"`
	Versus Versus   `json:"versus"` // B against A
}

// SweepDiff compares sweep b against sweep a (the baseline).
func SweepDiff(a, b *store.SweepRuns, opt Options) *SweepDiffReport {
	opt = opt.withDefaults()
	rep := &SweepDiffReport{A: a.Sweep, B: b.Sweep, ConfidenceLevel: opt.ConfidenceLevel}
	inB := map[string]*store.Cell{}
	for i := range b.Cells {
		inB[paramKey(b.Cells[i].Params)] = &b.Cells[i]
	}
	matched := map[string]bool{}
	var sideA, sideB, allA, allB []store.RunRow
	for _, c := range a.Cells {
		allA = append(allA, c.Runs...)
	}
	for _, c := range b.Cells {
		allB = append(allB, c.Runs...)
	}
	keys := opt.withServerRows(DefaultServerKeys, allA, allB)
	for _, ca := range a.Cells {
		key := paramKey(ca.Params)
		cb := inB[key]
		if cb == nil {
			rep.OnlyA = append(rep.OnlyA, ca.Label)
			continue
		}
		matched[key] = true
		sideA, sideB = append(sideA, ca.Runs...), append(sideB, cb.Runs...)
		d := CellDiff{Label: ca.Label, Params: ca.Params}
		for _, k := range keys {
			m := CellDiffMetric{
				MetricInfo: MetricInfo{Metric: k.String(), Unit: unitOf(k, ca.Runs, cb.Runs), Better: DirectionOf(k)},
				A:          estimateOf(ca.Runs, k, opt.ConfidenceLevel),
				B:          estimateOf(cb.Runs, k, opt.ConfidenceLevel),
			}
			m.Versus = judgeKey(k, m.A, m.B, m.Better, opt.ConfidenceLevel, opt.thresholdOf(k))
			d.Metrics = append(d.Metrics, m)
		}
		rep.Cells = append(rep.Cells, d)
	}
	for _, cb := range b.Cells {
		if !matched[paramKey(cb.Params)] {
			rep.OnlyB = append(rep.OnlyB, cb.Label)
		}
	}
	na, nb := sideNames(a.Sweep, b.Sweep)
	rep.ConfigDifferences = configDifferences([]string{na, nb}, [][]store.RunRow{sideA, sideB})
	for _, side := range []struct {
		name string
		runs []store.RunRow
	}{{na, allA}, {nb, allB}} {
		rep.Notes = append(rep.Notes, runNotes(side.name, side.runs)...)
		rep.Notes = append(rep.Notes, leftOutNotes(side.name, side.runs, keys)...)
	}
	rep.Notes = append(rep.Notes, failedCountNotes(na, sideA, keys)...) // of the matched cells, those compared
	rep.Notes = append(rep.Notes, failedCountNotes(nb, sideB, keys)...)
	return rep
}

// paramKey is a cell's parameters as canonical JSON, sorted by name, so
// cells match across sweeps whatever their declaration order.
func paramKey(params []plan.Param) string {
	sorted := slices.Clone(params)
	slices.SortFunc(sorted, func(x, y plan.Param) int { return strings.Compare(x.Name, y.Name) })
	b, _ := json.Marshal(sorted)
	return string(b)
}

// sideNames labels two sweeps by name, adding ids when the names are equal.
func sideNames(a, b store.Sweep) (string, string) {
	if a.Name == b.Name {
		return fmt.Sprintf("%s#%d", a.Name, a.ID), fmt.Sprintf("%s#%d", b.Name, b.ID)
	}
	return a.Name, b.Name
}

// Table lays the report out as a row per matched cell and statistic.
func (r *SweepDiffReport) Table() Table {
	na, nb := sideNames(r.A, r.B)
	t := Table{
		Title:  fmt.Sprintf("Sweep %s (id %d) against %s (id %d, baseline), %g%% confidence", nb, r.B.ID, na, r.A.ID, r.ConfidenceLevel*100),
		Header: []string{"cell", "trials", "metric", "unit", "better", na, nb, "Δ", "verdict"},
		Align:  "llllrrrrl",
		Group:  2,
	}
	for _, c := range r.Cells {
		for _, m := range c.Metrics {
			t.Rows = append(t.Rows, []string{
				c.Label, fmt.Sprintf("%d vs %d", m.A.N, m.B.N), m.Metric, m.Unit, m.Better.String(),
				m.A.format(), m.B.format(), formatDelta(m.Versus.DeltaPct), m.Versus.format(),
			})
		}
	}
	var keys []string
	var pcts []float64
	var seen shown
	for _, c := range r.Cells {
		for _, m := range c.Metrics {
			keys, pcts = append(keys, m.Metric), append(pcts, float64(m.Versus.ThresholdPct))
			seen.see(m.Versus)
		}
	}
	t.Notes = append(t.Notes, "cells are matched by their parameters; ± is the confidence half width over complete trials")
	t.Notes = append(t.Notes, verdictNotes(keys, pcts, seen)...)
	if len(r.OnlyA) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("only in %s: %s", na, strings.Join(r.OnlyA, ", ")))
	}
	if len(r.OnlyB) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("only in %s: %s", nb, strings.Join(r.OnlyB, ", ")))
	}
	t.Notes = append(t.Notes, configNotes(r.ConfigDifferences)...)
	t.Notes = append(t.Notes, r.Notes...)
	return t
}
