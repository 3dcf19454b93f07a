package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/store"
)

// runValue is a complete run's value of k for a comparison, and why the
// comparison leaves it out ("" to keep it), for what the run's own checks
// warn of: a server figure that cannot be (servermetrics.ImpossibleValue: a
// negative count, a percentage above 100), or an inter-token latency or
// per-user throughput of a run whose streams arrived whole (bursts). ok is
// false when the run has no value of k.
func runValue(r *store.RunRow, k Key) (v float64, why string, ok bool) {
	if v, ok = valueOf(r, k); !ok {
		return 0, "", false
	}
	switch {
	case isServerKey(k):
		why = impossibleServer(k, v)
	case slices.Contains(untimed, k.Metric):
		if n, of := bursts(r); n > 0 {
			why = fmt.Sprintf("%d of %d streamed requests delivered all their tokens in one read (the server or a proxy "+
				"buffered the stream: ITL 0, per-user throughput unbounded), so their ITL and per-user throughput are not "+
				"token timings: see `aiperf runs show`", n, of)
		}
	}
	return v, why, true
}

// untimed are the metrics a stream that arrived in one read makes untrue:
// its inter-token latency is 0, its per-user throughput unbounded (and left
// out, so the run's is that of its other requests).
var untimed = []string{metrics.TagITL, metrics.TagPerUserThroughput, metrics.TagFullITL, metrics.TagFullPerUser}

// burstKeys are the statistics bursts reads: a run's smallest ITL, its
// requests with an ITL, and those of them with a per-user throughput (an
// ITL above 0).
var burstKeys = []Key{{metrics.TagITL, "min"}, {metrics.TagITL, "count"}, {metrics.TagPerUserThroughput, "count"}}

// bursts is how many of a run's streamed requests with an ITL had all their
// tokens in one read (ITL 0, so no per-user throughput: the run's audit
// counts them, Audit.Bursts), of how many; none when its smallest ITL is
// above 0.
func bursts(r *store.RunRow) (n, of int) {
	low, ok := r.Stat(burstKeys[0].Metric, burstKeys[0].Stat)
	count, ok2 := r.Stat(burstKeys[1].Metric, burstKeys[1].Stat)
	if !ok || !ok2 || low > 0 {
		return 0, int(count)
	}
	timed, _ := r.Stat(burstKeys[2].Metric, burstKeys[2].Stat) // none when every request burst
	return int(count - timed), int(count)
}

// impossibleServer says why v, a run's value of server key k, cannot be
// what the server measured, by the check `aiperf runs show` makes of its
// headline figures: for an alias, in its unit; for a family an alias reads,
// scaled as the alias scales it. "" when it can be, or when k's family is
// none the aliases know (its meaning, and so what it cannot be, unknown).
func impossibleServer(k Key, v float64) string {
	a := aliasOf(k)
	if a == nil {
		var f *family
		if a, f = aliasReading(k); a == nil {
			return ""
		}
		if f.scale != 0 {
			v *= f.scale
		}
	}
	unit := a.unit
	if k.Stat == "rate" {
		unit += "/s"
	}
	if why := servermetrics.ImpossibleValue(v, unit); why != "" {
		return fmt.Sprintf("%s %s cannot be (%s): see `aiperf runs show`", formatFloat(v), unit, why)
	}
	return ""
}

// aliasReading is the alias that reads family key k's family as it is (not
// as a ratio of two), and that family.
func aliasReading(k Key) (*alias, *family) {
	source, name, _ := serverSource(k.Metric)
	for i := range aliases {
		a := &aliases[i]
		for j := range a.from {
			f := &a.from[j]
			if a.source == source && f.per == "" &&
				servermetrics.AIPerfName(f.metric, servermetrics.TypeCounter) == servermetrics.AIPerfName(name, servermetrics.TypeCounter) {
				return a, f
			}
		}
	}
	return nil, nil
}

// leftOutNotes warn of the complete runs of a side (labelled label) whose
// value of a statistic of keys the comparison leaves out, and why (the
// first run's reason): one note for the statistics left out of the same
// runs for the same reason.
func leftOutNotes(label string, runs []store.RunRow, keys []Key) []string {
	type leftOut struct {
		keys []string
		ids  []int64
		why  string
	}
	var outs []leftOut
	complete := completeRuns(runs)
	for _, k := range keys {
		cur := leftOut{keys: []string{k.String()}}
		for i := range runs {
			if _, why, ok := runValue(&runs[i], k); ok && why != "" && runs[i].Status == result.StatusComplete {
				cur.ids, cur.why = append(cur.ids, runs[i].ID), cmp.Or(cur.why, why)
			}
		}
		if len(cur.ids) == 0 {
			continue
		}
		if j := slices.IndexFunc(outs, func(o leftOut) bool { return o.why == cur.why && slices.Equal(o.ids, cur.ids) }); j >= 0 {
			outs[j].keys = append(outs[j].keys, cur.keys...)
			continue
		}
		outs = append(outs, cur)
	}
	notes := make([]string, 0, len(outs))
	for _, o := range outs {
		notes = append(notes, fmt.Sprintf("warning: %s: %s left out (n/a) of %d of %d runs %v: %s",
			label, strings.Join(o.keys, ", "), len(o.ids), complete, o.ids, o.why))
	}
	return notes
}

// hasValue reports whether a run of runs whose value of k counts (a
// complete run's, or a failed run's count of its requests' outcomes:
// counted) has one, kept or left out.
func hasValue(runs []store.RunRow, k Key) bool {
	return slices.ContainsFunc(runs, func(r store.RunRow) bool {
		_, _, ok := runValue(&r, k)
		return ok && counted(&r, k)
	})
}

// outcomes are the metrics that count what became of a run's requests: a
// run that failed because its requests failed (every one an HTTP error)
// stored them, and is an observation of them (16 errors of 16), not a
// missing value.
var outcomes = []string{metrics.TagRequestCount, metrics.TagErrorRequestCount, metrics.TagRequestErrorRate}

// counted reports whether r's value of k, when it has one, is part of its
// side's: a complete run's, or a failed run's count of its requests'
// outcomes (an interrupted run's counts stop where it was stopped).
func counted(r *store.RunRow, k Key) bool {
	return r.Status == result.StatusComplete || r.Status == result.StatusFailed && slices.Contains(outcomes, k.Metric)
}

// failedCountNotes say which failed runs of a side count in which of keys
// (counted), where the other statistics leave them out.
func failedCountNotes(label string, runs []store.RunRow, keys []Key) []string {
	var ids []int64
	var names []string
	for _, k := range keys {
		for i := range runs {
			if _, ok := valueOf(&runs[i], k); ok && runs[i].Status == result.StatusFailed && counted(&runs[i], k) {
				if !slices.Contains(ids, runs[i].ID) {
					ids = append(ids, runs[i].ID)
				}
				if !slices.Contains(names, k.String()) {
					names = append(names, k.String())
				}
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	return []string{fmt.Sprintf("%s: the failed run(s) %v count in %s with what their requests did (a run whose requests "+
		"all failed is an observation of its errors, not a missing one); the other statistics leave them out",
		label, ids, strings.Join(names, ", "))}
}
