package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/csvcell"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/result"
)

// WriteTimeslicesJSON writes profile_export_aiperf_timeslices.json in
// AIPerf's shape: {"timeslices": [...], "input_config": {...}}, each slice
// its timeslice_index (from 0), its wall-clock window (start_ns, end_ns,
// is_complete, as AIPerf's newer exports) and one block per metric, as in
// profile_export_aiperf.json.
func WriteTimeslicesJSON(w io.Writer, run *result.Run) error {
	list := make([]object, len(run.Timeslices))
	for i, s := range run.Timeslices {
		list[i] = append(object{{"timeslice_index", i}, {"start_ns", s.StartNs}, {"end_ns", s.EndNs},
			{"is_complete", s.Complete}}, metricBlocks(s.Summary)...)
	}
	doc := object{{"timeslices", list}, {"input_config", inputConfig(run.Config)}}
	if err := JSON(w, doc); err != nil {
		return fmt.Errorf("write timeslices json export: %w", err)
	}
	return nil
}

// WriteTimeslicesCSV writes profile_export_aiperf_timeslices.csv in AIPerf's
// tidy layout: Timeslice,Metric,Unit,Stat,Value, a row per statistic of each
// metric (sorted by tag) of each slice; derived and aggregate metrics have
// one row, stat avg. Values have two decimals, counts none, as AIPerf.
func WriteTimeslicesCSV(w io.Writer, run *result.Run) error {
	cw := csvcell.NewWriter(w)
	cw.UseCRLF = true
	_ = cw.Write([]string{"Timeslice", "Metric", "Unit", "Stat", "Value"})
	for i, s := range run.Timeslices {
		ms := slices.Clone(s.Summary.Metrics)
		slices.SortFunc(ms, func(a, b metrics.Metric) int { return strings.Compare(a.Tag, b.Tag) })
		index := strconv.Itoa(i)
		for _, m := range ms {
			if !Exported(m) {
				continue
			}
			row := func(stat, value string) {
				_ = cw.Write([]string{index, m.Header, m.Unit, stat, value})
			}
			if m.Stats == nil {
				row("avg", sliceNumber(m.Value))
				continue
			}
			for _, v := range statValues(m.Stats) {
				if metrics.HasStat(m.Tag, v.stat) {
					row(v.stat, csvNumber(v.x))
				}
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write timeslices csv export: %w", err)
	}
	return nil
}

// sliceNumber formats a derived or aggregate value: a whole number (a
// count) without decimals, as AIPerf writes its integers, else two.
func sliceNumber(v float64) string {
	if s, ok := numfmt.Whole(v); ok {
		return s
	}
	return csvNumber(v)
}
