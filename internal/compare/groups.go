package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// GroupsReport compares groups of runs side by side, each against the first
// (the baseline).
type GroupsReport struct {
	ConfidenceLevel   float64        `json:"confidence_level"`
	Groups            []GroupInfo    `json:"groups"`
	Metrics           []GroupsMetric `json:"metrics"`
	ConfigDifferences []string       `json:"config_differences,omitempty"`
	Notes             []string       `json:"notes,omitempty"`
	// ClientMinusServerTTFT is, per group, the client's TTFT p50 minus the
	// server's (from its histogram) in ms, over the complete runs that have
	// both: what the network and the client add. Empty when no group has
	// both.
	ClientMinusServerTTFT []Estimate `json:"client_minus_server_ttft_p50_ms,omitempty"`
	// ServerTTFTBucket is, per group, the bucket of the server's TTFT
	// histogram its p50 was interpolated in (the widest over the runs): a
	// gap smaller than its width is below the histogram's resolution. Zero
	// bounds for a group whose runs did not store it; empty when none did.
	ServerTTFTBucket []Bucket `json:"server_ttft_p50_bucket,omitempty"`
}

// GroupInfo says what a compared group holds.
type GroupInfo struct {
	Ref      string  `json:"ref"`
	Label    string  `json:"label"`
	Desc     string  `json:"desc"`
	RunIDs   []int64 `json:"run_ids"`
	Trials   int     `json:"trials"`             // complete runs, those compared
	Excluded []int64 `json:"excluded,omitempty"` // failed or interrupted runs, left out
}

// GroupsMetric is one statistic across the groups.
type GroupsMetric struct {
	Metric string     `json:"metric"` // metric.stat
	Unit   string     `json:"unit"`
	Better Direction  `json:"better"`
	Values []Estimate `json:"values"` // one per group
	// Versus compares each group after the first with the baseline.
	Versus []Versus `json:"versus"`
}

// Groups compares groups of runs (from store.RunsByRef) on opt's
// statistics; the first group is the baseline.
func Groups(groups []*store.Group, opt Options) *GroupsReport {
	opt = opt.withDefaults()
	rep := &GroupsReport{ConfidenceLevel: opt.ConfidenceLevel}
	names := make([]string, len(groups))
	sides := make([][]store.RunRow, len(groups))
	for i, g := range groups {
		info := GroupInfo{Ref: g.Ref, Label: groupLabel(g), Desc: g.Desc}
		for _, r := range g.Runs {
			info.RunIDs = append(info.RunIDs, r.ID)
			if r.Status == result.StatusComplete {
				info.Trials++
			} else {
				info.Excluded = append(info.Excluded, r.ID)
			}
		}
		if len(info.Excluded) > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d run(s) not complete, left out: %v", info.Label, len(info.Excluded), info.Excluded))
		}
		if g.Also != "" {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%q was read as %s; it also names %s: give run ids, or NAME/CELL for a sweep's cell, to pick another",
				g.Ref, g.Desc, g.Also))
		}
		rep.Notes = append(rep.Notes, runNotes(info.Label, g.Runs)...)
		rep.Groups = append(rep.Groups, info)
		names[i], sides[i] = info.Label, g.Runs
	}
	keys := opt.withServerRows(DefaultServerKeys, sides...)
	for _, k := range keys {
		m := GroupsMetric{Metric: k.String(), Unit: unitOf(k, sides...), Better: DirectionOf(k)}
		found := false
		for i := range groups {
			e := estimateOf(sides[i], k, opt.ConfidenceLevel)
			found = found || hasValue(sides[i], k)
			m.Values = append(m.Values, e)
			if i > 0 {
				m.Versus = append(m.Versus, judgeKey(k, m.Values[0], e, m.Better, opt.ConfidenceLevel, opt.thresholdOf(k)))
			}
		}
		if !found {
			what := "no compared run"
			if slices.ContainsFunc(rep.Groups, func(g GroupInfo) bool { return g.Trials == 0 && len(g.Excluded) > 0 }) {
				what = "no complete run (runs that did not complete are left out, above)"
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %s has this statistic", k, what))
		}
		rep.Metrics = append(rep.Metrics, m)
	}
	for i := range groups {
		rep.Notes = append(rep.Notes, leftOutNotes(names[i], sides[i], keys)...)
		rep.Notes = append(rep.Notes, failedCountNotes(names[i], sides[i], keys)...)
	}
	if len(groups) > 1 {
		rep.ConfigDifferences = configDifferences(names, sides)
	}
	gaps, buckets := make([]Estimate, len(sides)), make([]Bucket, len(sides))
	for i, runs := range sides {
		gaps[i], buckets[i] = clientMinusServerTTFT(runs, opt.ConfidenceLevel)
	}
	if slices.ContainsFunc(gaps, func(e Estimate) bool { return e.N > 0 }) {
		rep.ClientMinusServerTTFT = gaps
	}
	if slices.ContainsFunc(buckets, func(b Bucket) bool { return b != Bucket{} }) {
		rep.ServerTTFTBucket = buckets
	}
	return rep
}

// groupLabel names a group in headers: "run 12" for a run id, else the ref
// (a sweep named 12 is "12").
func groupLabel(g *store.Group) string {
	if g.Desc == "run "+g.Ref {
		return g.Desc
	}
	return g.Ref
}

// unitOf is the unit the runs report for k's metric.
func unitOf(k Key, sides ...[]store.RunRow) string {
	if isServerKey(k) {
		return serverUnit(k, sides...)
	}
	for _, runs := range sides {
		for i := range runs {
			if u := runs[i].Units[k.Metric]; u != "" {
				return u
			}
		}
	}
	return ""
}

// maxColumnLabel is the longest group label used as a column title.
const maxColumnLabel = 20

// Table lays the report out: a row per statistic; per group its value,
// and for every group after the baseline the delta and the verdict.
func (r *GroupsReport) Table() Table {
	t := Table{
		Title:  fmt.Sprintf("Compared against %s (baseline), %g%% confidence", r.Groups[0].Label, r.ConfidenceLevel*100),
		Header: []string{"metric", "unit", "better"},
		Align:  "lll",
	}
	// Long references (SWEEP/CELL-LABEL) would make every column wide: name
	// the groups A, B, ... and give the legend under the table.
	names := make([]string, len(r.Groups))
	var legend []string
	long := slices.ContainsFunc(r.Groups, func(g GroupInfo) bool { return len(g.Label) > maxColumnLabel })
	for i, g := range r.Groups {
		names[i] = g.Label
		if long {
			names[i] = string(rune('A' + i%26))
			legend = append(legend, names[i]+" = "+g.Label)
		}
	}
	for i, g := range r.Groups {
		t.Header = append(t.Header, fmt.Sprintf("%s (n=%d)", names[i], g.Trials))
		t.Align += "r"
		if i > 0 {
			t.Header = append(t.Header, names[i]+" Δ", names[i]+" verdict")
			t.Align += "rl"
		}
	}
	if len(legend) > 0 {
		t.Notes = append(t.Notes, strings.Join(legend, "; "))
	}
	for _, m := range r.Metrics {
		row := []string{m.Metric, m.Unit, m.Better.String()}
		for i, e := range m.Values {
			row = append(row, e.format())
			if i > 0 {
				v := m.Versus[i-1]
				row = append(row, formatDelta(v.DeltaPct), v.format())
			}
		}
		t.Rows = append(t.Rows, row)
	}
	if len(r.ClientMinusServerTTFT) > 0 {
		parts := make([]string, len(r.ClientMinusServerTTFT))
		for i, e := range r.ClientMinusServerTTFT {
			if parts[i] = e.format(); e.N > 0 {
				parts[i] += " ms"
				if i < len(r.ServerTTFTBucket) && unresolved(e, r.ServerTTFTBucket[i]) {
					parts[i] += ", not resolved"
				}
			}
			parts[i] += " (" + names[i] + ")"
		}
		note := "client TTFT − server TTFT p50: " + strings.Join(parts, ", ") + " — what the network and the client add"
		var widths []string
		for i, b := range r.ServerTTFTBucket {
			if b != (Bucket{}) {
				widths = append(widths, fmt.Sprintf("%s–%s ms (%s)", formatFloat(b.LowMs), formatFloat(b.HighMs), names[i]))
			}
		}
		if len(widths) > 0 {
			note += "; the server's p50 is interpolated inside its histogram bucket, " + strings.Join(widths, ", ") +
				", so a gap smaller than the bucket's width is not resolved"
		}
		t.Notes = append(t.Notes, note)
	}
	t.Notes = append(t.Notes, "± is the half width of the confidence interval of the mean over trials; "+
		"verdicts need ≥ 2 trials per side.")
	var keys []string
	var pcts []float64
	var seen shown
	for _, m := range r.Metrics {
		if len(m.Versus) > 0 {
			keys, pcts = append(keys, m.Metric), append(pcts, float64(m.Versus[0].ThresholdPct))
		}
		for _, v := range m.Versus {
			seen.see(v)
		}
	}
	t.Notes = append(t.Notes, verdictNotes(keys, pcts, seen)...)
	t.Notes = append(t.Notes, configNotes(r.ConfigDifferences)...)
	t.Notes = append(t.Notes, r.Notes...)
	return t
}

// runNotes warns about a side's complete runs whose numbers are not the
// server's alone: CLIENT-BOUND runs (the client shaped them, so a
// difference may be the client's too), runs whose KV-cache reset did
// not clear the cache (their prefix-cache hits may be an earlier run's),
// and runs with a warning that the server was not in the state their
// numbers assume (result.HookFlag: a profiler stop that failed, and may
// have left it running; a prefix cache warm at the start), one note a flag.
func runNotes(label string, runs []store.RunRow) []string {
	var bound, warm []int64
	var flags []string // the hook flags, in the order they first appear
	flagged := map[string][]int64{}
	complete := 0
	for _, r := range runs {
		if r.Status != result.StatusComplete {
			continue
		}
		complete++
		if r.ClientBound {
			bound = append(bound, r.ID)
		}
		if r.KVReset == result.ResetNotCleared {
			warm = append(warm, r.ID)
		}
		for _, f := range result.HookFlags(r.HookWarnings) {
			if _, ok := flagged[f]; !ok {
				flags = append(flags, f)
			}
			flagged[f] = append(flagged[f], r.ID)
		}
	}
	var notes []string
	if len(bound) > 0 {
		notes = append(notes, fmt.Sprintf("warning: %s: %d of %d runs were CLIENT-BOUND %v (the client, not the server, shaped their numbers: "+
			"see `aiperf runs show`); differences may be the client's", label, len(bound), complete, bound))
	}
	if len(warm) > 0 {
		notes = append(notes, fmt.Sprintf("warning: %s: in %d of %d runs %v the KV-cache reset did not clear the cache (see `aiperf runs show`): "+
			"their prefix-cache hits may be an earlier run's", label, len(warm), complete, warm))
	}
	for _, f := range flags {
		notes = append(notes, fmt.Sprintf("warning: %s: %s in %d of %d runs %v (see `aiperf runs show`)",
			label, f, len(flagged[f]), complete, flagged[f]))
	}
	return notes
}
