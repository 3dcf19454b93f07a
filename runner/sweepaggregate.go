package runner

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/csvcell"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
)

// AIPerf's sweep-level aggregate (its "Sweep Aggregate API Reference"):
// every cell of a sweep side by side, its best cells and Pareto front,
// written into AggregateDir.
const (
	SweepFile    = "profile_export_aiperf_sweep.json"
	SweepCSVFile = "profile_export_aiperf_sweep.csv"
)

// The statistics AIPerf's sweep analysis ranks the cells by: the highest
// throughput, the lowest latency (TTFT's p99, else the request latency's
// when a cell has no TTFT: a run that does not stream).
const throughputKey = "request_throughput_avg"

var latencyKeys = []string{"time_to_first_token_p99", "request_latency_p99"}

// SweepAggregate is profile_export_aiperf_sweep.json: the counts of the
// sweep's trials, its parameters, each cell's statistics over its trials
// (as its aggregate has them, keyed "<metric>_<stat>"), the cells of the
// best throughput and latency, and the Pareto-optimal cells.
type SweepAggregate struct {
	AggregationType       string             `json:"aggregation_type"` // "sweep", as AIPerf
	NumProfileRuns        int                `json:"num_profile_runs"`
	NumSuccessfulRuns     int                `json:"num_successful_runs"`
	FailedRuns            []FailedRun        `json:"failed_runs"`
	Metadata              SweepMetadata      `json:"metadata"`
	PerCombinationMetrics []Combination      `json:"per_combination_metrics"`
	BestConfigurations    BestConfigurations `json:"best_configurations"`
	ParetoOptimal         []map[string]any   `json:"pareto_optimal"`
}

// SweepMetadata names the swept parameters, each with its values in the
// order the cells first take them, and how many cells the sweep has.
type SweepMetadata struct {
	SweepParameters []SweepParameter `json:"sweep_parameters"`
	NumCombinations int              `json:"num_combinations"`
}

// SweepParameter is one swept parameter and the values it takes.
type SweepParameter struct {
	Name   string `json:"name"`
	Values []any  `json:"values"`
}

// Combination is one cell with a successful trial: its parameters and its
// statistics. Cell (its directory's name) and ClientBound are ours:
// ClientBound marks a cell with a CLIENT-BOUND trial (the client, not the
// server, shaped its numbers), which is neither a best configuration nor
// Pareto-optimal, as in `aiperf compare --sweep`.
type Combination struct {
	Parameters  map[string]any           `json:"parameters"`
	Metrics     map[string]AggregateStat `json:"metrics"`
	Cell        string                   `json:"cell"`
	ClientBound bool                     `json:"client_bound,omitempty"`
}

// BestConfigurations are the cells of the highest mean throughput and of
// the lowest mean latency p99 (each left out unless every cell has it), of
// the cells that are not client-bound.
type BestConfigurations struct {
	Throughput *BestConfiguration `json:"best_throughput,omitempty"`
	Latency    *BestConfiguration `json:"best_latency_p99,omitempty"`
}

// BestConfiguration is a best cell's parameters and the mean it reached.
type BestConfiguration struct {
	Parameters map[string]any `json:"parameters"`
	Metric     float64        `json:"metric"`
	Unit       string         `json:"unit"`
}

// SweepAggregates computes the sweep aggregate from its cells' aggregates
// (aggs[i] is cells[i]'s, in sweep order). A cell none of whose trials
// succeeded is counted and its failures listed, but it has no combination,
// as AIPerf drops it; ok is false when no cell has one. A client-bound cell
// is listed, marked, and left out of the best configurations and the
// Pareto front (it pushes no other cell off it).
func SweepAggregates(cells []plan.Cell, aggs []Aggregate) (sa SweepAggregate, ok bool) {
	sa = SweepAggregate{AggregationType: "sweep", FailedRuns: []FailedRun{}, PerCombinationMetrics: []Combination{},
		ParetoOptimal: []map[string]any{}, Metadata: SweepMetadata{NumCombinations: len(cells)}}
	names := paramNames(cells)
	values := map[string][]any{}
	for i, c := range cells {
		params := map[string]any{}
		for _, p := range c.Params {
			params[names[p.Name]] = p.Value
			if !slices.ContainsFunc(values[p.Name], func(v any) bool { return compareValue(v, p.Value) == 0 }) {
				values[p.Name] = append(values[p.Name], p.Value)
			}
		}
		m := aggs[i].Metadata
		sa.NumProfileRuns += m.NumProfileRuns
		sa.NumSuccessfulRuns += m.NumSuccessfulRuns
		for _, f := range m.FailedRuns {
			sa.FailedRuns = append(sa.FailedRuns, FailedRun{Label: c.Label + "/" + f.Label, Error: f.Error})
		}
		if m.NumSuccessfulRuns > 0 {
			sa.PerCombinationMetrics = append(sa.PerCombinationMetrics, Combination{Parameters: params, Metrics: aggs[i].Metrics, Cell: c.Label,
				ClientBound: len(m.ClientBoundRuns) > 0})
		}
	}
	full := make([]string, 0, len(values))
	for name := range values {
		full = append(full, name)
	}
	slices.Sort(full) // as AIPerf orders them, by their whole names
	for _, name := range full {
		sa.Metadata.SweepParameters = append(sa.Metadata.SweepParameters, SweepParameter{Name: names[name], Values: values[name]})
	}
	combos := slices.DeleteFunc(slices.Clone(sa.PerCombinationMetrics), func(c Combination) bool { return c.ClientBound })
	if best, ok := bestOf(combos, throughputKey, 1); ok {
		sa.BestConfigurations.Throughput = &best
	}
	if key := latencyKey(combos); key != "" {
		best, _ := bestOf(combos, key, -1)
		sa.BestConfigurations.Latency = &best
		sa.ParetoOptimal = pareto(combos, key)
	}
	return sa, len(sa.PerCombinationMetrics) > 0
}

// paramNames names each swept parameter as AIPerf's sweep aggregate does:
// by its last dotted part (phases.profiling.concurrency is concurrency)
// unless another parameter's ends the same way.
func paramNames(cells []plan.Cell) map[string]string {
	leaf := func(name string) string { return name[strings.LastIndex(name, ".")+1:] }
	leaves := map[string]map[string]bool{}
	for _, c := range cells {
		for _, p := range c.Params {
			if leaves[leaf(p.Name)] == nil {
				leaves[leaf(p.Name)] = map[string]bool{}
			}
			leaves[leaf(p.Name)][p.Name] = true
		}
	}
	names := map[string]string{}
	for l, full := range leaves {
		for name := range full {
			names[name] = name
			if len(full) == 1 {
				names[name] = l
			}
		}
	}
	return names
}

// mean is a combination's mean of statistic key, and whether it has one.
func mean(c Combination, key string) (float64, bool) {
	s, ok := c.Metrics[key]
	if !ok || s.Mean == nil {
		return 0, false
	}
	return *s.Mean, true
}

// hasAll says whether every combination has a mean of key.
func hasAll(combos []Combination, key string) bool {
	return len(combos) > 0 && !slices.ContainsFunc(combos, func(c Combination) bool { _, ok := mean(c, key); return !ok })
}

// latencyKey is the latency statistic every combination has, TTFT's p99
// first ("": none).
func latencyKey(combos []Combination) string {
	for _, k := range latencyKeys {
		if hasAll(combos, k) {
			return k
		}
	}
	return ""
}

// bestOf is the combination of the highest (sign 1) or lowest (sign -1)
// mean of key, the first of equals; false unless every combination has it.
func bestOf(combos []Combination, key string, sign float64) (BestConfiguration, bool) {
	if !hasAll(combos, key) {
		return BestConfiguration{}, false
	}
	best := 0
	for i := range combos {
		a, _ := mean(combos[i], key)
		b, _ := mean(combos[best], key)
		if sign*a > sign*b {
			best = i
		}
	}
	v, _ := mean(combos[best], key)
	return BestConfiguration{Parameters: combos[best].Parameters, Metric: v, Unit: combos[best].Metrics[key].Unit}, true
}

// pareto lists the parameters of the combinations no other dominates on
// throughput (higher) and latency (lower): at least as good on both and
// better on one. They are ordered by their parameters (name, then value).
func pareto(combos []Combination, latency string) []map[string]any {
	if !hasAll(combos, throughputKey) {
		return []map[string]any{}
	}
	point := func(c Combination) (float64, float64) {
		t, _ := mean(c, throughputKey)
		l, _ := mean(c, latency)
		return t, l
	}
	var front []map[string]any
	for i, c := range combos {
		t, l := point(c)
		dominated := slices.ContainsFunc(combos, func(o Combination) bool {
			ot, ol := point(o)
			return ot >= t && ol <= l && (ot > t || ol < l)
		})
		if !dominated {
			front = append(front, combos[i].Parameters)
		}
	}
	slices.SortStableFunc(front, compareParams)
	return front
}

// compareParams orders two cells' parameters by their sorted names, then
// values (numbers by value).
func compareParams(a, b map[string]any) int {
	keys := func(m map[string]any) []string {
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	ka, kb := keys(a), keys(b)
	for i := range min(len(ka), len(kb)) {
		if c := cmp.Compare(ka[i], kb[i]); c != 0 {
			return c
		}
		if c := compareValue(a[ka[i]], b[kb[i]]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(ka), len(kb))
}

// compareValue orders two values of a parameter: numbers by value, any
// other by its text.
func compareValue(a, b any) int {
	x, xok := number(a)
	y, yok := number(b)
	if xok && yok {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(cellText(a), cellText(b))
}

// number is v as a float64 when it is a number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// cellText is a parameter's value as a CSV cell: a number or text as it
// is, anything else (a scenario's overrides) as JSON.
func cellText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int, int64, bool, json.Number:
		return fmt.Sprint(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// CSV is profile_export_aiperf_sweep.csv as AIPerf writes it, sections
// separated by an empty row: a row per combination (its parameters, then
// mean, std, min, max and cv of every statistic), the best configurations,
// the Pareto-optimal points and the metadata.
func (sa SweepAggregate) CSV() ([]byte, error) {
	var params []string
	for _, p := range sa.Metadata.SweepParameters {
		params = append(params, p.Name)
	}
	paramCells := func(m map[string]any) []string {
		row := make([]string, len(params))
		for i, p := range params {
			if v, ok := m[p]; ok {
				row[i] = cellText(v)
			}
		}
		return row
	}
	rows := sa.combinationRows(params, paramCells)
	rows = append(rows, nil, []string{"Best Configurations"})
	best := []struct {
		name string
		b    *BestConfiguration
	}{{"Best Throughput", sa.BestConfigurations.Throughput}, {"Best Latency P99", sa.BestConfigurations.Latency}}
	if best[0].b != nil || best[1].b != nil {
		rows = append(rows, slices.Concat([]string{"Configuration"}, params, []string{"Metric", "Unit"}))
	}
	for _, b := range best {
		if b.b != nil {
			rows = append(rows, slices.Concat([]string{b.name}, paramCells(b.b.Parameters), []string{csvNum(&b.b.Metric, 2), b.b.Unit}))
		}
	}
	rows = append(rows, nil, []string{"Pareto Optimal Points"})
	if len(sa.ParetoOptimal) == 0 {
		rows = append(rows, []string{"None"})
	} else {
		rows = append(rows, params)
	}
	for _, p := range sa.ParetoOptimal {
		rows = append(rows, paramCells(p))
	}
	rows = append(rows, nil, []string{"Metadata"}, []string{"Field", "Value"},
		[]string{"Aggregation Type", sa.AggregationType},
		[]string{"Sweep Parameters", strings.Join(params, ", ")},
		[]string{"Number of Combinations", strconv.Itoa(sa.Metadata.NumCombinations)},
		[]string{"Number of Profile Runs", strconv.Itoa(sa.NumProfileRuns)},
		[]string{"Number of Successful Runs", strconv.Itoa(sa.NumSuccessfulRuns)})
	var buf bytes.Buffer
	w := csvcell.NewWriter(&buf)
	w.UseCRLF = true // Python's csv module, as AIPerf's exports
	if err := w.WriteAll(rows); err != nil {
		return nil, fmt.Errorf("encode sweep aggregate csv: %w", err)
	}
	return buf.Bytes(), nil
}

// combinationRows is the CSV's first section: its header and a row per
// combination; every statistic any combination has is a column.
func (sa SweepAggregate) combinationRows(params []string, paramCells func(map[string]any) []string) [][]string {
	if len(sa.PerCombinationMetrics) == 0 {
		return nil
	}
	var keys []string
	for _, c := range sa.PerCombinationMetrics {
		for k := range c.Metrics {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	header := slices.Clone(params)
	for _, k := range keys {
		header = append(header, k+"_mean", k+"_std", k+"_min", k+"_max", k+"_cv")
	}
	rows := [][]string{header}
	for _, c := range sa.PerCombinationMetrics {
		row := paramCells(c.Parameters)
		for _, k := range keys {
			s, ok := c.Metrics[k]
			if !ok {
				row = append(row, "", "", "", "", "")
				continue
			}
			row = append(row, csvNum(s.Mean, 2), csvNum(s.Std, 2), csvNum(s.Min, 2), csvNum(s.Max, 2), csvNum(s.CV, 4))
		}
		rows = append(rows, row)
	}
	return rows
}

// writeSweepAggregate writes sa into dir as JSON and CSV.
func writeSweepAggregate(dir string, sa SweepAggregate) error {
	if err := report.WriteJSONFile(filepath.Join(dir, SweepFile), sa); err != nil {
		return fmt.Errorf("write %s: %w", SweepFile, err)
	}
	c, err := sa.CSV()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, SweepCSVFile), c, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", SweepCSVFile, err)
	}
	return nil
}
