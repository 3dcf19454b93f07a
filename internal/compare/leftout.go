package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/store"
)

// runValue is a complete run's value of k for a comparison, and why the
// comparison leaves it out ("" to keep it): a server figure that cannot be
// (servermetrics.ImpossibleValue: a negative count, a percentage above
// 100), which `aiperf runs show` warns of. ok is false when the run has no
// value of k.
func runValue(r *store.RunRow, k Key) (v float64, why string, ok bool) {
	if v, ok = valueOf(r, k); !ok {
		return 0, "", false
	}
	if isServerKey(k) {
		why = impossibleServer(k, v)
	}
	return v, why, true
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

// leftOutNotes warn, per statistic of keys, of the complete runs of a
// side (labelled label) whose value of it the comparison leaves out, and
// why (the first run's reason).
func leftOutNotes(label string, runs []store.RunRow, keys []Key) []string {
	var notes []string
	for _, k := range keys {
		var ids []int64
		first, complete := "", 0
		for i := range runs {
			if runs[i].Status != result.StatusComplete {
				continue
			}
			complete++
			if _, why, ok := runValue(&runs[i], k); ok && why != "" {
				ids = append(ids, runs[i].ID)
				first = cmp.Or(first, why)
			}
		}
		if len(ids) > 0 {
			notes = append(notes, fmt.Sprintf("warning: %s: %s left out (n/a) of %d of %d runs %v: %s",
				label, k, len(ids), complete, ids, strings.TrimSpace(first)))
		}
	}
	return notes
}

// hasValue reports whether a complete run of runs has a value of k, kept
// or left out.
func hasValue(runs []store.RunRow, k Key) bool {
	return slices.ContainsFunc(runs, func(r store.RunRow) bool {
		_, _, ok := runValue(&r, k)
		return ok && r.Status == result.StatusComplete
	})
}
