package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// WriteCSV writes profile_export_aiperf.csv in AIPerf's two-section layout:
// record metrics under `Metric,avg,min,max,p1,…,p99,std`, a blank line, then
// derived and aggregate metrics under `Metric,Value`. Names carry the unit
// ("Time to First Token (ms)"), values two decimals, lines end in CRLF as
// Python's csv module writes them. Rows in each section are sorted by metric
// tag, as AIPerf sorts them.
func WriteCSV(w io.Writer, run *result.Run) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	var records, scalars []metrics.Metric
	for _, m := range run.Profiling.Metrics {
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
		_ = cw.Write([]string{"Metric", "avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"})
		for _, m := range records {
			s := m.Stats
			row := []string{csvName(m)}
			for _, v := range []float64{s.Avg, s.Min, s.Max, s.P1, s.P5, s.P10, s.P25, s.P50, s.P75, s.P90, s.P95, s.P99, s.Std} {
				row = append(row, csvNumber(v))
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
	if hasSource(run, servermetrics.SourceGPU) { // AIPerf appends the GPU telemetry section
		if _, err := io.WriteString(w, "\r\n"); err != nil {
			return fmt.Errorf("write csv export: %w", err)
		}
		return servermetrics.WriteGPUCSV(w, run.Server, "")
	}
	return nil
}

// csvName is the metric's header with its unit, except for plain counts
// ("Request Count"), as AIPerf names them.
func csvName(m metrics.Metric) string {
	if m.Unit == "" || m.Unit == "count" || m.Unit == metrics.UnitRequests {
		return m.Header
	}
	return m.Header + " (" + m.Unit + ")"
}

// csvNumber formats v with two decimals.
func csvNumber(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
