package servermetrics

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/csvcell"
	"github.com/aiperf-go/aiperf/internal/numfmt"
)

// csvHistogramKeys are the histogram columns of AIPerf's CSV, in its order.
var csvHistogramKeys = []string{"count", "count_rate", "sum", "sum_rate", "avg", "p1_estimate", "p5_estimate", "p10_estimate",
	"p25_estimate", "p50_estimate", "p75_estimate", "p90_estimate", "p95_estimate", "p99_estimate"}

// WriteCSV writes AIPerf's server_metrics_export.csv for phase ("" for the
// profiling span): comment lines with the versions, then a section per
// type — gauge, counter, histogram, unknown — separated by blank lines,
// each with its header: Endpoint, Type, Metric, Unit, the type's stats, one
// column per label name (sorted; AIPerf orders them to minimise gaps),
// Description, and for histograms the bucket deltas as "le=count;…". Info
// families (gauges named *_info) come last, one row per label: Endpoint,
// Metric, Key, Value, Description. Floats have four decimals, counts none.
// Every cell goes through csvcell: a name or value from the server that a
// spreadsheet would run as a formula starts with a single quote.
func WriteCSV(w io.Writer, r *Result, phase string, m Meta) error {
	if _, err := fmt.Fprintf(w, "# AIPerf Server Metrics Export (CSV)\n# aiperf_version: %s\n# schema_version: %s\n"+
		"# benchmark_id: %s\n# Note: Same benchmark_id and version appear in the JSON export\n#\n",
		m.ToolVersion, SchemaVersion, m.BenchmarkID); err != nil {
		return fmt.Errorf("write server metrics CSV: %w", err)
	}
	byType := map[string][]Series{}
	var info []Series
	for _, s := range exported(r, SourceServer, phase) {
		if s.Type == TypeGauge && strings.HasSuffix(s.Metric, "_info") {
			info = append(info, s)
			continue
		}
		byType[s.Type] = append(byType[s.Type], s)
	}
	cw := csvcell.NewWriter(w)
	first := true
	section := func(rows [][]string) {
		if !first {
			_ = cw.Write(nil)
		}
		first = false
		for _, row := range rows {
			_ = cw.Write(row)
		}
	}
	for _, typ := range []string{TypeGauge, TypeCounter, TypeHistogram, TypeUnknown} {
		if ss := byType[typ]; len(ss) > 0 {
			section(csvSection(typ, ss))
		}
	}
	if len(info) > 0 {
		section(csvInfo(info))
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write server metrics CSV: %w", err)
	}
	return nil
}

// csvSection is a type's header and rows.
func csvSection(typ string, ss []Series) [][]string {
	keys := statKeys(typ)
	if typ == TypeHistogram {
		keys = csvHistogramKeys
	}
	var labels []string
	for _, s := range ss {
		for k := range s.Labels {
			if !slices.Contains(labels, k) {
				labels = append(labels, k)
			}
		}
	}
	slices.Sort(labels)
	header := append([]string{"Endpoint", "Type", "Metric", "Unit"}, keys...)
	for _, l := range labels { // the server's label names
		header = append(header, l)
	}
	header = append(header, "Description")
	if typ == TypeHistogram {
		header = append(header, "buckets")
	}
	slices.SortStableFunc(ss, func(a, b Series) int {
		return cmp.Or(cmp.Compare(AIPerfName(a.Metric, typ), AIPerfName(b.Metric, typ)),
			cmp.Compare(displayEndpoint(a.Endpoint), displayEndpoint(b.Endpoint)), cmp.Compare(labelKey(a.Labels), labelKey(b.Labels)))
	})
	rows := [][]string{header}
	for _, s := range ss {
		_, unit := describe(s.Metric, s.Type)
		row := []string{displayEndpoint(s.Endpoint), typ, AIPerfName(s.Metric, typ), unit}
		for _, k := range keys {
			v, ok := s.Stats[k]
			row = append(row, csvNumber(v, ok, k == "count"))
		}
		for _, l := range labels {
			row = append(row, s.Labels[l])
		}
		row = append(row, s.Description)
		if typ == TypeHistogram {
			parts := make([]string, len(s.Buckets))
			for i, b := range s.Buckets {
				parts[i] = b.LE + "=" + csvNumber(b.Count, true, true)
			}
			row = append(row, strings.Join(parts, ";"))
		}
		rows = append(rows, row)
	}
	return rows
}

// csvInfo is the info families, one row per label.
func csvInfo(ss []Series) [][]string {
	slices.SortStableFunc(ss, func(a, b Series) int {
		return cmp.Or(cmp.Compare(a.Metric, b.Metric), cmp.Compare(displayEndpoint(a.Endpoint), displayEndpoint(b.Endpoint)))
	})
	rows := [][]string{{"Endpoint", "Metric", "Key", "Value", "Description"}}
	for _, s := range ss {
		for _, l := range sortedLabels(s.Labels) {
			rows = append(rows, []string{displayEndpoint(s.Endpoint), s.Metric, l.key,
				l.val.(string), s.Description})
		}
	}
	return rows
}

// csvNumber formats a stat as AIPerf's CSV does: empty when absent, an
// integer for counts, four decimals otherwise; a huge value in scientific
// notation (numfmt.Fixed).
func csvNumber(v float64, ok, integer bool) string {
	if !ok {
		return ""
	}
	if s, whole := numfmt.Whole(v); integer && whole {
		return s
	}
	return numfmt.Fixed(v, 4)
}
