package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/aiperf-go/aiperf/internal/stats"
)

// verdictConfidence is the two-sided confidence of the pinned verdicts'
// intervals: each verdict is a one-sided claim at (1+verdictConfidence)/2.
const verdictConfidence = 0.90

// pinnedBound is one criterion of the pinned verdicts: aiperf's figure over
// the minimal client's, at least (atLeast) or at most bound.
type pinnedBound struct {
	name    string
	get     func(pinnedFigures) float64
	atLeast bool
	bound   float64
}

// pinnedBounds are the criteria the pinned table is judged by: aiperf
// drives the neutral server at least as fast as the minimal client, with at
// most its CPU per request, and costs the server at most 5% more.
var pinnedBounds = []pinnedBound{
	{"req/s", func(f pinnedFigures) float64 { return f.reqPerSec }, true, 1.0},
	{"client CPU", func(f pinnedFigures) float64 { return f.clientCPU }, false, 1.0},
	{"server CPU", func(f pinnedFigures) float64 { return f.serverCPU }, false, 1.05},
}

// ratioVerdict is one criterion judged over paired rounds: the geometric
// mean of aiperf's figure over the minimal client's, its confidence
// interval and what can be said of the bound.
type ratioVerdict struct {
	mean, low, high float64
	verdict         string // "met", "missed" or "undecided"
}

// judgeRatios judges the paired ratios xs (one per round: aiperf's figure
// over the minimal client's in the same round, so that the VM's drift
// between rounds cancels) against b: met when the whole interval is on the
// right side of the bound, missed when it is on the wrong side, undecided
// otherwise (and with fewer than two rounds, whose spread is unknown).
func judgeRatios(xs []float64, b pinnedBound) ratioVerdict {
	logs := make([]float64, len(xs))
	for i, x := range xs {
		logs[i] = math.Log(x)
	}
	a := stats.Aggregate(logs, verdictConfidence)
	v := ratioVerdict{mean: math.Exp(a.Mean), low: math.Exp(a.CILow), high: math.Exp(a.CIHigh), verdict: "undecided"}
	if a.N < 2 || math.IsNaN(a.CILow) {
		return v
	}
	bound := math.Log(b.bound)
	good, bad := a.CILow >= bound, a.CIHigh < bound
	if !b.atLeast {
		good, bad = a.CIHigh <= bound, a.CILow > bound
	}
	switch {
	case good:
		v.verdict = "met"
	case bad:
		v.verdict = "missed"
	}
	return v
}

// pairedRatios are, per round, aiperf's figure over the minimal client's.
func pairedRatios(aiperf, minimal []pinnedFigures, get func(pinnedFigures) float64) []float64 {
	out := make([]float64, 0, len(aiperf))
	for r := range min(len(aiperf), len(minimal)) {
		out = append(out, get(aiperf[r])/get(minimal[r]))
	}
	return out
}

// levelRuns are the runs of aiperf and of the minimal client at one
// concurrency, round by round.
type levelRuns struct {
	c                int
	client           string // aiperf, or an aiperf-rxN of -pinned-extra
	aiperf, baseline []pinnedFigures
}

// printVerdicts writes the pinned table's verdicts: for each concurrency
// and criterion, the paired ratio's geometric mean, its interval and
// whether the criterion is met, missed or undecided; and how much the
// minimal client's req/s moved between rounds, the VM's drift.
func printVerdicts(w io.Writer, levels []levelRuns) {
	fmt.Fprintf(w, "verdicts: aiperf ÷ minimal, paired by round (geometric mean [%.0f%% interval]), one-sided at %.0f%%:\n",
		100*verdictConfidence, 100*(1+verdictConfidence)/2)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	head := "concurrency\tclient\t"
	for _, b := range pinnedBounds {
		op := "≤"
		if b.atLeast {
			op = "≥"
		}
		head += fmt.Sprintf("%s %s %.2f×\t", b.name, op, b.bound)
	}
	fmt.Fprintln(tw, head+"minimal req/s between rounds\t")
	for _, l := range levels {
		line := fmt.Sprintf("%d\t%s\t", l.c, l.client)
		for _, b := range pinnedBounds {
			v := judgeRatios(pairedRatios(l.aiperf, l.baseline, b.get), b)
			line += fmt.Sprintf("%.2f× [%.2f, %.2f] %s\t", v.mean, v.low, v.high, v.verdict)
		}
		base := make([]float64, len(l.baseline))
		for i, f := range l.baseline {
			base[i] = f.reqPerSec
		}
		a := stats.Aggregate(base, verdictConfidence)
		fmt.Fprintln(tw, line+fmt.Sprintf("%.0f–%.0f\t", a.Min, a.Max))
	}
	tw.Flush()
}
