package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// printServerMetrics prints the server-metrics block of `runs show`: the
// scraped endpoints and the headline server and GPU statistics of the
// profiling phase. Nothing when the run did not collect.
func printServerMetrics(w io.Writer, run *result.Run) {
	sm := run.Server
	if sm == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Server metrics:")
	if len(sm.Endpoints) == 0 {
		fmt.Fprintln(w, "  no endpoint was scraped")
	} else {
		rows := make([][]string, len(sm.Endpoints))
		for i, e := range sm.Endpoints {
			rows[i] = []string{e.URL, e.Source, strconv.Itoa(e.Scrapes), strconv.Itoa(e.Failures), e.Interval.String(), orDash(e.LastError)}
		}
		report.Table(w, []string{"endpoint", "source", "scrapes", "failures", "interval", "last error"}, rows, "llrrrl")
	}
	series := profilingSeries(run)
	if heads := compare.ServerHeadlines(series); len(heads) > 0 {
		rows := make([][]string, len(heads))
		for i, h := range heads {
			rows[i] = []string{h.Key, numfmt.Text(h.Value, 2), h.Unit, h.Family}
		}
		fmt.Fprintln(w, "Profiling phase (compare them with aiperf compare --metric KEY):")
		report.Table(w, []string{"key", "value", "unit", "from"}, rows, "lrll")
	}
	families := map[string]bool{}
	for _, s := range sm.Series {
		families[s.Source+" "+s.Metric] = true
	}
	fmt.Fprintf(w, "%d series of %d families stored, every phase (all of them: --format json)\n",
		len(sm.Series), len(families))
	for _, warning := range sm.Warnings {
		fmt.Fprintln(w, "warning:", warning)
	}
}

// profilingSeries are the run's series of its profiling phase, whatever
// the phase is called.
func profilingSeries(run *result.Run) []servermetrics.Series {
	profiling := map[string]bool{plan.KindProfiling: true}
	for _, p := range run.Config.PhaseList() {
		profiling[p.Name] = p.Kind == plan.KindProfiling
	}
	var out []servermetrics.Series
	for _, s := range run.Server.Series {
		if profiling[s.Phase] {
			out = append(out, s)
		}
	}
	return out
}
