package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/artifacts"
	"github.com/aiperf-go/aiperf/internal/csvcell"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/stats"
)

// The per-cell aggregate over trials, next to the trials, as AIPerf names
// them.
const (
	AggregateFile    = "profile_export_aiperf_aggregate.json"
	AggregateCSVFile = "profile_export_aiperf_aggregate.csv"
)

// AggregateSchemaVersion is the version of AIPerf's aggregate file we write
// (its own, independent of profile_export_aiperf.json's).
const AggregateSchemaVersion = "1.0"

// Aggregate is AIPerf's multi-run aggregate (profile_export_aiperf_aggregate.json):
// the provenance, a metadata block, and for every run-level statistic (key
// "<metric>_<stat>", e.g. "time_to_first_token_p99") the mean, sample std,
// min, max, cv, se and a t-distribution confidence interval over the
// successful trials.
type Aggregate struct {
	SchemaVersion string                   `json:"schema_version"`
	AIPerfVersion string                   `json:"aiperf_version,omitempty"`
	Metadata      AggregateMetadata        `json:"metadata"`
	Metrics       map[string]AggregateStat `json:"metrics"`
}

// AggregateMetadata is AIPerf's aggregate metadata; Cell, CellID and Params
// (which sweep cell the trials ran) and ClientBoundRuns are ours, which
// AIPerf readers ignore.
type AggregateMetadata struct {
	AggregationType   string       `json:"aggregation_type"` // "confidence", as AIPerf
	NumProfileRuns    int          `json:"num_profile_runs"`
	NumSuccessfulRuns int          `json:"num_successful_runs"`
	FailedRuns        []FailedRun  `json:"failed_runs"`
	ConfidenceLevel   float64      `json:"confidence_level"`
	RunLabels         []string     `json:"run_labels"` // of the successful trials, aggregated
	Cell              string       `json:"cell"`
	CellID            string       `json:"cell_id"`
	Params            []plan.Param `json:"parameters,omitempty"`
	// ClientBoundRuns are the labels of the aggregated trials that were
	// CLIENT-BOUND (the client, not the server, shaped their numbers); ours.
	ClientBoundRuns []string `json:"client_bound_runs,omitempty"`
}

// FailedRun is a trial left out of the aggregate, as the collated file
// lists it too.
type FailedRun = artifacts.FailedRun

// AggregateStat is one statistic aggregated over trials; unknown values
// (fewer than two trials) are null.
type AggregateStat struct {
	Mean      *float64 `json:"mean"`
	Std       *float64 `json:"std"`
	Min       *float64 `json:"min"`
	Max       *float64 `json:"max"`
	CV        *float64 `json:"cv"`
	SE        *float64 `json:"se"`
	CILow     *float64 `json:"ci_low"`
	CIHigh    *float64 `json:"ci_high"`
	TCritical *float64 `json:"t_critical"`
	Unit      string   `json:"unit"`
}

// Aggregates computes the aggregate of a cell's trials: runs holds every
// trial that ended (the failed ones are listed, not aggregated).
func Aggregates(cell plan.Cell, runs []*result.Run, trials int, confidence float64) Aggregate {
	agg := Aggregate{SchemaVersion: AggregateSchemaVersion, Metrics: map[string]AggregateStat{},
		Metadata: AggregateMetadata{AggregationType: "confidence", NumProfileRuns: trials, FailedRuns: []FailedRun{},
			ConfidenceLevel: confidence, RunLabels: []string{}, Cell: cell.Label, CellID: cell.ID, Params: cell.Params}}
	values := map[string][]float64{}
	units := map[string]string{}
	for _, r := range runs {
		if r.Status != result.StatusComplete {
			agg.Metadata.FailedRuns = append(agg.Metadata.FailedRuns, FailedRun{Label: result.RunLabel(r.Info.Trial), Error: r.Error})
			continue
		}
		if agg.AIPerfVersion == "" {
			agg.AIPerfVersion = r.ToolVersion
		}
		agg.Metadata.NumSuccessfulRuns++
		agg.Metadata.RunLabels = append(agg.Metadata.RunLabels, result.RunLabel(r.Info.Trial))
		if r.Audit.ClientBound {
			agg.Metadata.ClientBoundRuns = append(agg.Metadata.ClientBoundRuns, result.RunLabel(r.Info.Trial))
		}
		for _, m := range r.Profiling.Metrics {
			if !report.Exported(m) {
				continue // AIPerf's INTERNAL metrics: not in its aggregate either
			}
			for stat, v := range statValues(m) {
				key := m.Tag + "_" + stat
				values[key] = append(values[key], v)
				units[key] = m.Unit
			}
		}
	}
	for k, vs := range values {
		a := stats.Aggregate(vs, confidence)
		agg.Metrics[k] = AggregateStat{Unit: units[k], Mean: num(a.Mean), Std: num(a.Std), Min: num(a.Min),
			Max: num(a.Max), CV: num(a.CV), SE: num(a.SE), CILow: num(a.CILow), CIHigh: num(a.CIHigh), TCritical: num(a.T)}
	}
	return agg
}

// writeAggregate writes the cell's aggregate into dir, as JSON and CSV,
// and, when the trials wrote per-request records, the collated file
// (artifacts.FileCollated) from each successful trial's records, which
// trialDir locates by trial number; cooldown is the pause between trials.
func writeAggregate(dir string, cell plan.Cell, runs []*result.Run, trials int, confidence float64,
	trialDir func(trial int) string, cooldown float64) error {
	agg := Aggregates(cell, runs, trials, confidence)
	b, err := json.MarshalIndent(agg, "", "  ")
	if err != nil {
		return fmt.Errorf("encode aggregate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create aggregate dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, AggregateFile), b, 0o644); err != nil {
		return fmt.Errorf("write aggregate: %w", err)
	}
	c, err := agg.CSV()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, AggregateCSVFile), c, 0o644); err != nil {
		return fmt.Errorf("write aggregate csv: %w", err)
	}
	return writeCollated(dir, cell, runs, trialDir, cooldown, agg.AIPerfVersion)
}

// writeCollated writes AIPerf's profile_export_aiperf_collated.json into
// dir: the successful trials' profiling requests pooled (see
// artifacts.Collate). Nothing is written when the trials keep no
// per-request records (--export-level summary).
func writeCollated(dir string, cell plan.Cell, runs []*result.Run, trialDir func(int) string, cooldown float64, version string) error {
	names := report.NamesOf(cell.Profile)
	if trialDir == nil || !names.Records() {
		return nil
	}
	var ok []artifacts.CollatedRun
	var failed []FailedRun
	for _, r := range runs {
		label := result.RunLabel(r.Info.Trial)
		if r.Status != result.StatusComplete {
			failed = append(failed, FailedRun{Label: label, Error: r.Error})
			continue
		}
		path := filepath.Join(trialDir(r.Info.Trial), names.JSONL)
		if _, err := os.Stat(path); err != nil {
			path = "" // a trial that wrote none adds nothing, as AIPerf
		}
		ok = append(ok, artifacts.CollatedRun{Label: label, JSONL: path})
	}
	c, err := artifacts.Collate(version, ok, failed, cooldown)
	if err != nil {
		return fmt.Errorf("collate the trials' records: %w", err)
	}
	if err := report.WriteJSONFile(filepath.Join(dir, artifacts.FileCollated), c); err != nil {
		return fmt.Errorf("write %s: %w", artifacts.FileCollated, err)
	}
	return nil
}

// CSV is profile_export_aiperf_aggregate.csv as AIPerf writes it: a row per
// statistic (metric, mean, std, min, max, cv, se, ci_low, ci_high,
// t_critical, unit; unknown values empty), a blank line, then the metadata
// as "Title Case Key,value" rows.
func (a Aggregate) CSV() ([]byte, error) {
	var buf bytes.Buffer
	w := csvcell.NewWriter(&buf)
	rows := [][]string{{"metric", "mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical", "unit"}}
	keys := make([]string, 0, len(a.Metrics))
	for k := range a.Metrics {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := a.Metrics[k]
		rows = append(rows, []string{k, csvNum(s.Mean, 2), csvNum(s.Std, 2), csvNum(s.Min, 2), csvNum(s.Max, 2),
			csvNum(s.CV, 4), csvNum(s.SE, 4), csvNum(s.CILow, 2), csvNum(s.CIHigh, 2), csvNum(s.TCritical, 4), s.Unit})
	}
	m := a.Metadata
	labels := make([]string, len(m.RunLabels))
	for i, l := range m.RunLabels {
		labels[i] = "'" + l + "'"
	}
	rows = append(rows, nil,
		[]string{"Aggregation Type", m.AggregationType},
		[]string{"Total Runs", strconv.Itoa(m.NumProfileRuns)},
		[]string{"Successful Runs", strconv.Itoa(m.NumSuccessfulRuns)},
		[]string{"Confidence Level", strconv.FormatFloat(m.ConfidenceLevel, 'f', -1, 64)},
		[]string{"Run Labels", "[" + strings.Join(labels, ", ") + "]"},
	)
	if err := w.WriteAll(rows); err != nil {
		return nil, fmt.Errorf("encode aggregate csv: %w", err)
	}
	return buf.Bytes(), nil
}

func csvNum(v *float64, decimals int) string {
	if v == nil {
		return ""
	}
	return numfmt.Fixed(*v, decimals) // 1.00e+300 for a huge value, as the per-run CSV
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
