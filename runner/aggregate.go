package runner

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/stats"
)

// AggregateFile is the per-cell aggregate over trials, next to the trials.
const AggregateFile = "profile_export_aiperf_aggregate.json"

// Aggregate is AIPerf's multi-run aggregate: for every run-level statistic
// (key "<metric>_<stat>", e.g. "time_to_first_token_p99") the mean, sample
// std, min, max, cv, se and a t-distribution confidence interval over the
// successful trials.
type Aggregate struct {
	AggregationType   string                   `json:"aggregation_type"`
	Cell              string                   `json:"cell"`
	CellID            string                   `json:"cell_id"`
	Params            []plan.Param             `json:"parameters,omitempty"`
	NumRuns           int                      `json:"num_runs"`
	NumSuccessfulRuns int                      `json:"num_successful_runs"`
	ConfidenceLevel   float64                  `json:"confidence_level"`
	Metrics           map[string]AggregateStat `json:"metrics"`
}

// AggregateStat is one statistic aggregated over trials; unknown values
// (fewer than two trials) are null.
type AggregateStat struct {
	Unit      string   `json:"unit"`
	Mean      *float64 `json:"mean"`
	Std       *float64 `json:"std"`
	Min       *float64 `json:"min"`
	Max       *float64 `json:"max"`
	CV        *float64 `json:"cv"`
	SE        *float64 `json:"se"`
	CILow     *float64 `json:"ci_low"`
	CIHigh    *float64 `json:"ci_high"`
	TCritical *float64 `json:"t_critical"`
}

// Aggregates computes the aggregate of a cell's successful trials.
func Aggregates(cell plan.Cell, runs []*result.Run, trials int, confidence float64) Aggregate {
	agg := Aggregate{AggregationType: "multi_run", Cell: cell.Label, CellID: cell.ID, Params: cell.Params,
		NumRuns: trials, ConfidenceLevel: confidence, Metrics: map[string]AggregateStat{}}
	values := map[string][]float64{}
	units := map[string]string{}
	for _, r := range runs {
		if r.Status != result.StatusComplete {
			continue
		}
		agg.NumSuccessfulRuns++
		for _, m := range r.Profiling.Metrics {
			for stat, v := range statValues(m) {
				key := m.Tag + "_" + stat
				values[key] = append(values[key], v)
				units[key] = m.Unit
			}
		}
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := stats.Aggregate(values[k], confidence)
		agg.Metrics[k] = AggregateStat{Unit: units[k], Mean: num(a.Mean), Std: num(a.Std), Min: num(a.Min),
			Max: num(a.Max), CV: num(a.CV), SE: num(a.SE), CILow: num(a.CILow), CIHigh: num(a.CIHigh), TCritical: num(a.T)}
	}
	return agg
}

// writeAggregate writes the cell's aggregate into dir.
func writeAggregate(dir string, cell plan.Cell, runs []*result.Run, trials int, confidence float64) error {
	b, err := json.MarshalIndent(Aggregates(cell, runs, trials, confidence), "", "  ")
	if err != nil {
		return fmt.Errorf("encode aggregate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create aggregate dir: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, AggregateFile), b, 0o644)
}

// statValues lists the run-level statistics of a metric: "value" for a
// scalar, avg and percentiles for a distribution.
func statValues(m metrics.Metric) map[string]float64 {
	if m.Stats == nil {
		return map[string]float64{"avg": m.Value}
	}
	s := m.Stats
	return map[string]float64{"avg": s.Avg, "min": s.Min, "max": s.Max, "p50": s.P50, "p90": s.P90,
		"p95": s.P95, "p99": s.P99, "std": s.Std}
}

func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
