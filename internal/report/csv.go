package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/csvcell"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// WriteCSV writes profile_export_aiperf.csv in AIPerf's two-section layout:
// record metrics under `Metric,avg,min,max,sum,p1,…,p99,std` (AIPerf's
// STAT_KEYS), a blank line, then derived and aggregate metrics under
// `Metric,Value`. Names carry the unit ("Time to First Token (ms)"), values
// two decimals, lines end in CRLF as Python's csv module writes them. Rows
// in each section are sorted by metric tag, as AIPerf sorts them; AIPerf's
// internal metrics are left out (exported). With GPU telemetry, two blank
// lines and AIPerf's GPU table follow.
func WriteCSV(w io.Writer, run *result.Run) error {
	cw := csvcell.NewWriter(w)
	cw.UseCRLF = true
	var records, scalars []metrics.Metric
	for _, m := range run.Profiling.Metrics {
		if !Exported(m) {
			continue
		}
		if m.Stats != nil {
			records = append(records, m)
		} else {
			scalars = append(scalars, m)
		}
	}
	byTag := func(a, b metrics.Metric) int { return strings.Compare(a.Tag, b.Tag) }
	slices.SortFunc(records, byTag)
	slices.SortFunc(scalars, byTag)
	if len(records) > 0 {
		header := []string{"Metric"}
		for _, v := range statValues(&metrics.Stats{}) {
			header = append(header, v.stat)
		}
		_ = cw.Write(header)
		for _, m := range records {
			row := []string{csvName(m)}
			for _, v := range statValues(m.Stats) {
				if !metrics.HasStat(m.Tag, v.stat) {
					row = append(row, "") // AIPerf's empty cell for a statistic the metric lacks
					continue
				}
				row = append(row, csvNumber(v.x))
			}
			_ = cw.Write(row)
		}
		if len(scalars) > 0 {
			_ = cw.Write(nil)
		}
	}
	if len(scalars) > 0 {
		_ = cw.Write([]string{"Metric", "Value"})
		for _, m := range scalars {
			_ = cw.Write([]string{csvName(m), csvNumber(m.Value)})
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv export: %w", err)
	}
	if hasSource(run, servermetrics.SourceGPU) { // AIPerf appends the GPU telemetry section after two empty rows
		if _, err := io.WriteString(w, "\r\n\r\n"); err != nil {
			return fmt.Errorf("write csv export: %w", err)
		}
		return servermetrics.WriteGPUCSV(w, run.Server, "")
	}
	return nil
}

// statValue is one statistic of a record metric, named as AIPerf's CSV.
type statValue struct {
	stat string
	x    float64
}

// statValues are the statistics AIPerf's CSV exports write, in its order
// (STAT_KEYS, src/aiperf/common/constants.py: sum after max).
func statValues(s *metrics.Stats) []statValue {
	return []statValue{{"avg", s.Avg}, {"min", s.Min}, {"max", s.Max}, {"sum", s.Sum}, {"p1", s.P1}, {"p5", s.P5}, {"p10", s.P10},
		{"p25", s.P25}, {"p50", s.P50}, {"p75", s.P75}, {"p90", s.P90}, {"p95", s.P95}, {"p99", s.P99}, {"std", s.Std}}
}

// internalTags are the metrics AIPerf flags INTERNAL (MetricFlags.INTERNAL):
// computed, but left out of its JSON and CSV summaries and time slices
// (MetricResultsProcessor.summarize drops them). Ours stay in the run's
// result and the store.
var internalTags = map[string]bool{
	metrics.TagMinRequestTimestamp:  true, // min_request_metric.py
	metrics.TagMaxResponseTimestamp: true, // max_response_metric.py
}

// Exported reports whether m belongs in AIPerf's summary exports (its
// JSON, CSV, time slices and the sweep aggregate).
func Exported(m metrics.Metric) bool { return !internalTags[m.Tag] }

// csvName is the metric's header with its unit, except for plain counts
// ("Request Count"), as AIPerf names them.
func csvName(m metrics.Metric) string {
	if m.Unit == "" || m.Unit == "count" || m.Unit == metrics.UnitRequests {
		return m.Header
	}
	return m.Header + " (" + m.Unit + ")"
}

// csvNumber formats v with two decimals, a huge one in scientific
// notation and one that is not a finite number as n/a (numfmt.Text).
func csvNumber(v float64) string { return numfmt.Text(v, 2) }
