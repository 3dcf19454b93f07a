package htmlreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/search"
)

// Search is a search the report shows in its own section, first: its
// search_history.json, what the search found and spent, its trajectory
// figure, a table of its probes with their verdicts and its bracket.
type Search struct {
	Name string            // the search (its sweep) as `aiperf runs` names it
	Doc  search.HistoryDoc // its search_history.json
	// History is its stored trials, probes in iteration order (optional):
	// with it the figure shows each trial.
	History *search.History
}

// searchView is one search's section.
type searchView struct {
	ID, Name string
	Facts    [][2]string
	Figure   *figure
	Note     string // why there is no figure
	Probes   table
	Bracket  *table
}

// searchViews builds the sections of the searches.
func searchViews(searches []Search) ([]searchView, error) {
	var out []searchView
	for i, s := range searches {
		id := fmt.Sprintf("search-%d", i)
		v := searchView{ID: id, Name: s.Name, Facts: searchFacts(s.Doc), Probes: probeTable(id, s.Doc), Bracket: bracketTable(id, s.Doc)}
		tr, err := plot.TrajectoryOf(s.Doc, plot.TrajectoryOptions{Name: id + "-trajectory", History: s.History})
		if err != nil {
			v.Note = "No trajectory figure: " + err.Error()
		} else {
			fig, err := inline(tr.Figure())
			if err != nil {
				return nil, err
			}
			v.Figure = &fig
		}
		out = append(out, v)
	}
	return out, nil
}

// searchFacts are what a search is and what it found: its recipe or
// planner, why it stopped, the trials it spent against the grid it
// replaced, and its best probe.
func searchFacts(doc search.HistoryDoc) [][2]string {
	c := doc.Config
	what := c.Planner
	if doc.Recipe != nil {
		what = *doc.Recipe + " (" + c.Planner + ")"
	}
	facts := [][2]string{{"search", what}}
	var space []string
	for _, d := range c.SearchSpace {
		s := fmt.Sprintf("%s in [%s, %s] %s", dimName(d), num(d.Lo), num(d.Hi), d.Kind)
		if d.Log {
			s += ", log scale"
		}
		space = append(space, s)
	}
	facts = append(facts, [2]string{"space", strings.Join(space, "; ")})
	for _, o := range c.Objectives {
		facts = append(facts, [2]string{"objective", fmt.Sprintf("%s.%s, %s", o.Metric, o.Stat, strings.ToLower(o.Direction))})
	}
	var slas []string
	for _, f := range c.SLAFilters {
		slas = append(slas, f.String())
	}
	if len(slas) > 0 {
		facts = append(facts, [2]string{"SLA", strings.Join(slas, ", ") + fmt.Sprintf(" at %s confidence", pct(c.ConfidenceLevel))})
	}
	reason := "still running, or stopped abnormally"
	if doc.ConvergenceReason != nil {
		reason = *doc.ConvergenceReason
	}
	facts = append(facts, [2]string{"stopped", reason},
		[2]string{"spent", fmt.Sprintf("%d probes, %d trials, against %d trials for the %d-cell grid it replaced",
			len(doc.Iterations), doc.TrialsSpent, doc.GridEquivalent.Trials, doc.GridEquivalent.Cells)})
	if len(doc.BestTrials) > 0 {
		b := doc.BestTrials[0]
		best := fmt.Sprintf("iteration %d at %s", b.IterationIdx, values(c.SearchSpace, b.VariationValues))
		if len(b.ObjectiveValues) > 0 {
			best += ": " + stat(b.ObjectiveValues[0])
		}
		if !b.Feasible {
			best += " (no probe passed: the best measured)"
		}
		facts = append(facts, [2]string{"best", best})
	}
	return facts
}

// probeTable is a row per probe, coloured by its verdict: its point,
// trials, verdict with confidence, each filter's mean and bounds, the
// objective.
func probeTable(id string, doc search.HistoryDoc) table {
	c := doc.Config
	t := table{ID: id + "-probes", Title: "Probes, in the order they ran"}
	t.Header, t.Right = append(t.Header, "iteration"), append(t.Right, true)
	for _, d := range c.SearchSpace {
		t.Header, t.Right = append(t.Header, dimName(d)), append(t.Right, true)
	}
	t.Header, t.Right = append(t.Header, "trials", "failed", "verdict", "confidence"), append(t.Right, true, true, false, true)
	for _, f := range c.SLAFilters {
		t.Header, t.Right = append(t.Header, f.Metric+" "+f.Stat+" [bounds] "+f.Op+" "+num(f.Threshold)), append(t.Right, false)
	}
	for _, o := range c.Objectives {
		t.Header, t.Right = append(t.Header, o.Metric+" "+o.Stat), append(t.Right, true)
	}
	t.Header, t.Right = append(t.Header, "note"), append(t.Right, false)
	for _, it := range doc.Iterations {
		cells := []string{strconv.Itoa(it.IterationIdx)}
		for _, d := range c.SearchSpace {
			cells = append(cells, value(it.VariationValues[d.Path]))
		}
		verdict := string(it.Verdict)
		switch {
		case len(c.SLAFilters) == 0:
			verdict = "" // nothing to judge by
		case verdict == "":
			verdict = map[bool]string{true: "pass", false: "fail"}[it.Feasible] // AIPerf's history
		}
		cells = append(cells, strconv.Itoa(it.Trials), strconv.Itoa(it.FailedTrials), or(verdict, "—"), confidence(it.Confidence))
		for i := range c.SLAFilters {
			cells = append(cells, filterCell(it.SLA, i))
		}
		for range c.Objectives {
			cells = append(cells, "—")
			if len(it.ObjectiveValues) > 0 {
				cells[len(cells)-1] = stat(it.ObjectiveValues[0])
			}
		}
		note := ""
		if it.NonMonotonicWarning {
			note = "non-monotonic: contradicts the bracket"
		}
		t.Rows = append(t.Rows, row{Class: verdict, Cells: append(cells, note)})
	}
	return t
}

// filterCell is filter i's mean, bounds and verdict at a probe.
func filterCell(sla []search.FilterDoc, i int) string {
	if i >= len(sla) {
		return "—"
	}
	f := sla[i]
	if f.Observed == nil {
		return "not measured: " + string(f.Verdict)
	}
	s := stat(*f.Observed)
	if f.Lower != nil && f.Upper != nil {
		s += " [" + stat(*f.Lower) + ", " + stat(*f.Upper) + "]"
	}
	return s + " " + string(f.Verdict)
}

// bracketTable is a 1D SLA search's answer: the highest load that passed,
// the loads left ambiguous, the lowest that failed above it with its first
// breach, and a failure below the highest pass (not monotonic) apart.
func bracketTable(id string, doc search.HistoryDoc) *table {
	b := doc.BoundarySummary
	if b == nil || len(doc.Config.SLAFilters) == 0 {
		return nil
	}
	t := &table{ID: id + "-bracket", Title: "The bracket: " + b.SweptDimPath,
		Header: []string{"end", "value", "iteration", "trials", "confidence", "first breach"},
		Right:  []bool{false, true, true, true, true, false}}
	if p := b.FeasibleMax; p != nil {
		t.Rows = append(t.Rows, row{Class: "pass", Cells: []string{"highest pass", value(p.Value), strconv.Itoa(p.IterationIdx),
			strconv.Itoa(p.Trials), confidence(p.Confidence), ""}})
	} else {
		t.Rows = append(t.Rows, row{Cells: []string{"highest pass", "none passed", "", "", "", ""}})
	}
	if len(b.Ambiguous) > 0 {
		var vs []string
		for _, v := range b.Ambiguous {
			vs = append(vs, value(v))
		}
		t.Rows = append(t.Rows, row{Class: "ambiguous", Cells: []string{"ambiguous between", strings.Join(vs, ", "), "", "", "", ""}})
	}
	above, below := b.Ends()
	switch {
	case above != nil:
		t.Rows = append(t.Rows, failRow("lowest fail", above))
	case below != nil:
		t.Rows = append(t.Rows, row{Cells: []string{"lowest fail", "none failed above", "", "", "", ""}})
	default:
		t.Rows = append(t.Rows, row{Cells: []string{"lowest fail", "none failed", "", "", "", ""}})
	}
	if below != nil {
		t.Rows = append(t.Rows, failRow("failed below", below))
		t.Notes = append(t.Notes, "not monotonic: "+value(below.Value)+" failed below the highest pass")
	}
	if b.BindingConstraint != "" {
		t.Notes = append(t.Notes, "binding constraint: "+b.BindingConstraint)
	}
	return t
}

// failRow is a failing end of the bracket with its first breach.
func failRow(end string, f *search.InfeasibleDoc) row {
	breach := ""
	if fb := f.FirstBreach; fb != nil {
		breach = fb.Filter.String()
		if fb.Observed != nil {
			breach += ": observed " + stat(*fb.Observed)
		}
	}
	return row{Class: "fail", Cells: []string{end, value(f.Value), strconv.Itoa(f.IterationIdx), strconv.Itoa(f.Trials),
		confidence(f.Confidence), breach}}
}

func dimName(d search.SpaceDoc) string {
	if d.Name != "" {
		return d.Name
	}
	return d.Path
}

// values is a point as "concurrency=8, output_tokens_mean=256".
func values(space []search.SpaceDoc, vs map[string]any) string {
	var parts []string
	for _, d := range space {
		parts = append(parts, dimName(d)+"="+value(vs[d.Path]))
	}
	return strings.Join(parts, ", ")
}

// value is a variation value as search_history.json spells it.
func value(v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case float64:
		return num(x)
	}
	return fmt.Sprint(v)
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// stat shows a statistic with two decimals, as the sweep tables do (a
// huge one in scientific notation).
func stat(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	return numfmt.Fixed(x, 2)
}

func confidence(c *float64) string {
	if c == nil {
		return "—"
	}
	return pct(*c)
}

func pct(c float64) string { return strconv.FormatFloat(100*c, 'f', 1, 64) + "%" }
