package artifacts

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/stats"
)

// FileCollated is AIPerf's collated multi-run export, written beside the
// aggregate (profile_export_aiperf_aggregate.json).
const FileCollated = "profile_export_aiperf_collated.json"

// CollatedSchemaVersion is the collated file's own schema version, as
// AIPerf's AggregateDetailedJsonExporter writes it.
const CollatedSchemaVersion = "1.0.0"

// collatedDescription is AIPerf's description of the file.
const collatedDescription = "Collated per-request metrics across all runs. Pools individual request-level values from every run " +
	"into a single population and computes combined percentiles (p50, p90, p95, p99). Contrast with " +
	"profile_export_aiperf_aggregate.json, which computes statistics over run-level summary values."

// Collated is AIPerf's profile_export_aiperf_collated.json: every
// successful run's per-request values of each metric pooled into one
// population ("combined": mean, sample std, numpy percentiles, count),
// with each run's own mean and count ("per_run").
type Collated struct {
	SchemaVersion string                    `json:"schema_version"`
	AIPerfVersion string                    `json:"aiperf_version"`
	Description   string                    `json:"description"`
	Metadata      CollatedMetadata          `json:"metadata"`
	Metrics       map[string]CollatedMetric `json:"metrics"`
}

// CollatedMetadata is the file's metadata, in AIPerf's keys.
type CollatedMetadata struct {
	AggregationType   string      `json:"aggregation_type"` // "detailed", as AIPerf
	NumProfileRuns    int         `json:"num_profile_runs"`
	NumSuccessfulRuns int         `json:"num_successful_runs"`
	FailedRuns        []FailedRun `json:"failed_runs"`
	RunLabels         []string    `json:"run_labels"`
	CooldownSeconds   float64     `json:"cooldown_seconds"`
}

// FailedRun is a run left out, with its error.
type FailedRun struct {
	Label string `json:"label"`
	Error string `json:"error"`
}

// CollatedMetric is one metric pooled over the runs.
type CollatedMetric struct {
	Combined CollatedStats    `json:"combined"`
	PerRun   []CollatedPerRun `json:"per_run"`
}

// CollatedStats are the pooled population's statistics.
type CollatedStats struct {
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"` // sample (n−1); 0 for one value
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Count int     `json:"count"`
}

// CollatedPerRun is one run's share of a metric.
type CollatedPerRun struct {
	Label string  `json:"label"`
	Mean  float64 `json:"mean"`
	Count int     `json:"count"`
}

// CollatedRun is a successful run to pool: its label and its
// profile_export.jsonl ("" when it wrote none).
type CollatedRun struct {
	Label, JSONL string
}

// Collate pools the runs' per-request values as AIPerf does: the
// profiling requests without an error, every metric whose value is a
// number (a list, such as inter_chunk_latency, is left out), in the units
// the file gives. runs are the successful runs, failed the others; a run
// without a JSONL adds nothing to the metrics. A JSONL over the package's
// bounds (MaxLineBytes a line, MaxRows records) is an error.
func Collate(version string, runs []CollatedRun, failed []FailedRun, cooldown float64) (Collated, error) {
	c := Collated{SchemaVersion: CollatedSchemaVersion, AIPerfVersion: version, Description: collatedDescription,
		Metadata: CollatedMetadata{AggregationType: "detailed", NumProfileRuns: len(runs) + len(failed),
			NumSuccessfulRuns: len(runs), FailedRuns: append([]FailedRun{}, failed...), RunLabels: []string{},
			CooldownSeconds: cooldown},
		Metrics: map[string]CollatedMetric{}}
	pooled := map[string][]float64{}
	for _, r := range runs {
		c.Metadata.RunLabels = append(c.Metadata.RunLabels, r.Label)
		if r.JSONL == "" {
			continue
		}
		values, err := RequestValues(r.JSONL)
		if err != nil {
			return c, err
		}
		for name, vs := range values {
			m := c.Metrics[name]
			m.PerRun = append(m.PerRun, CollatedPerRun{Label: r.Label, Mean: stats.Mean(vs), Count: len(vs)})
			c.Metrics[name] = m
			pooled[name] = append(pooled[name], vs...)
		}
	}
	for name, vs := range pooled {
		st := metrics.Compute(vs)
		sd := 0.0
		if len(vs) > 1 {
			sd = stats.StdDev(vs)
		}
		m := c.Metrics[name]
		m.Combined = CollatedStats{Mean: st.Avg, Std: sd, P50: st.P50, P90: st.P90, P95: st.P95, P99: st.P99, Count: st.Count}
		c.Metrics[name] = m
	}
	return c, nil
}

// requestLine is what Collate takes of a profile_export.jsonl line.
type requestLine struct {
	Metadata struct {
		Phase string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
	} `json:"metrics"`
	Error json.RawMessage `json:"error"`
}

// RequestValues reads a JSONL's numeric metric values by tag, over its
// error-free profiling requests; a line that is not a record is skipped,
// as AIPerf does.
func RequestValues(path string) (map[string][]float64, error) {
	out := map[string][]float64{}
	rows := 0
	err := lines(path, func(line []byte, _ int) error {
		var l requestLine
		if json.Unmarshal(line, &l) != nil || l.Metadata.Phase != "profiling" || len(l.Error) > 0 && string(l.Error) != "null" {
			return nil
		}
		if rows++; rows > MaxRows {
			return fmt.Errorf("read %s: more than %d records", path, MaxRows)
		}
		for name, m := range l.Metrics {
			var v float64
			if string(m.Value) == "null" || len(m.Value) == 0 {
				continue // json.Unmarshal leaves v as it is for null
			}
			if json.Unmarshal(m.Value, &v) == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
				out[name] = append(out[name], v)
			}
		}
		return nil
	})
	return out, err
}
