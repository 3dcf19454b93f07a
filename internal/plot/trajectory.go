package plot

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/internal/stats"
)

// Trajectory is a search's path, from its search_history.json: each
// probe's statistic against the searched parameter (over several
// parameters, against the iteration) with its verdict, confidence interval
// and trials; the SLA threshold; the bracket of a 1D search; the
// best-so-far objective of a multi-dimensional one; the fitted curve of
// prefill-ttft-curve.
type Trajectory struct {
	Name    string             `json:"name"`
	Title   string             `json:"title"`
	X       TrajectoryAxis     `json:"x"`
	Panels  []TrajectoryPanel  `json:"panels"`
	Bracket *TrajectoryBracket `json:"bracket,omitempty"`
}

// TrajectoryAxis is the x axis: the searched parameter (Param its path in
// search_history.json), or the iteration index when Param is "".
type TrajectoryAxis struct {
	Label string `json:"label"`
	Param string `json:"param"`
	Log   bool   `json:"log"`
}

// TrajectoryPanel is one statistic's probes: an SLA filter's (SLA set, the
// marks its verdicts) or the objective's (the marks the probes' verdicts).
type TrajectoryPanel struct {
	Key    string         `json:"key"`   // "time_to_first_token.p95"
	Label  string         `json:"label"` // the y axis' title
	Log    bool           `json:"log"`
	SLA    *search.Filter `json:"sla,omitempty"`
	Probes []ProbeMark    `json:"probes"`
	// BestSoFar is the best objective among the probes that passed (every
	// probe, without SLA filters), after each iteration from the first
	// that passed (multi-dimensional searches).
	BestSoFar []XY `json:"best_so_far,omitempty"`
	// Fit is prefill-ttft-curve's fitted TTFT(ISL), as prefill_curve.json
	// holds it.
	Fit *search.Fit `json:"fit,omitempty"`
}

// XY is a point of a line.
type XY struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// ProbeMark is one probe on a panel: its mean with the confidence interval
// (an SLA panel's is the verdict's own bounds; Low and High are NaN under
// two trials), its verdict ("" when the search has no SLA filter to judge
// by) and each successful trial's value (when the history was given).
type ProbeMark struct {
	Iteration int            `json:"iteration"`
	X         float64        `json:"x"`
	Y         Interval       `json:"y"`
	Verdict   search.Outcome `json:"verdict"`
	Trials    []float64      `json:"trials,omitempty"`
}

// TrajectoryBracket is a 1D search's answer: the highest load that passed
// and the lowest that failed (NaN for an end that does not exist), the
// loads left ambiguous between them.
type TrajectoryBracket struct {
	Pass      float64   `json:"pass"`
	Fail      float64   `json:"fail"`
	Ambiguous []float64 `json:"ambiguous,omitempty"`
	Label     string    `json:"label"`
}

// TrajectoryOptions tune TrajectoryOf.
type TrajectoryOptions struct {
	Name  string // the file's path under the output directory; "search_trajectory" when empty
	Title string // "" for one made from the history
	// History is the search's stored trials, its probes in iteration
	// order (what the planner replays). With it each trial is a small dot
	// and an objective's mean has its confidence interval; without, the
	// probes' means and their verdicts' bounds are drawn.
	History *search.History
}

// maxTrajectoryPanels bounds the panels, side by side: the objective and
// two filters, or three filters.
const maxTrajectoryPanels = 3

// TrajectoryOf is the trajectory figure's data of a search from its
// search_history.json. A 1D search is drawn against its parameter (log
// scale when its range spans two decades or more, or it is searched on a
// log scale): a panel per SLA filter with the threshold and the bracket,
// and the objective's when there is no filter or the planner is bayesian;
// prefill-ttft-curve's TTFT with its fit. A search over several parameters
// is drawn against the iteration: the objective with its best-so-far line,
// then the filters. A history with no probe, or nothing measured, is an
// error.
func TrajectoryOf(doc search.HistoryDoc, opt TrajectoryOptions) (*Trajectory, error) {
	if len(doc.Iterations) == 0 {
		return nil, errors.New("the search has no probe yet: nothing to draw")
	}
	t := &Trajectory{Name: opt.Name, Title: opt.Title}
	if t.Name == "" {
		t.Name = "search_trajectory"
	}
	if t.Title == "" {
		t.Title = trajectoryTitle(doc)
	}
	xs, err := t.xAxis(doc)
	if err != nil {
		return nil, err
	}
	var obj *search.ObjectiveDoc
	if len(doc.Config.Objectives) > 0 {
		obj = &doc.Config.Objectives[0]
	}
	oneD := t.X.Param != ""
	objective := func() {
		if obj != nil {
			t.addPanel(objectivePanel(doc, *obj, xs, opt.History, !oneD))
		}
	}
	if !oneD || len(doc.Config.SLAFilters) == 0 || doc.Config.Planner == search.PlannerBayesian {
		objective()
	}
	for i, f := range doc.Config.SLAFilters {
		t.addPanel(slaPanel(doc, i, f, xs, opt.History))
	}
	if doc.Recipe != nil && *doc.Recipe == search.RecipePrefillCurve && len(t.Panels) > 0 {
		t.Panels[0].Fit = curveFit(t.Panels[0].Probes)
	}
	if len(t.Panels) == 0 {
		return nil, errors.New("nothing to draw: no probe measured the objective or an SLA filter's statistic")
	}
	if oneD && doc.BoundarySummary != nil && len(doc.Config.SLAFilters) > 0 {
		t.Bracket = bracketOf(doc.BoundarySummary)
	}
	return t, nil
}

// addPanel keeps a panel with probes, up to maxTrajectoryPanels.
func (t *Trajectory) addPanel(p TrajectoryPanel) {
	if len(p.Probes) > 0 && len(t.Panels) < maxTrajectoryPanels {
		p.Log = logSpan(p.values())
		t.Panels = append(t.Panels, p)
	}
}

// xAxis sets the x axis and returns each iteration's x: its parameter's
// value in 1D, else its index.
func (t *Trajectory) xAxis(doc search.HistoryDoc) ([]float64, error) {
	xs := make([]float64, len(doc.Iterations))
	if len(doc.Config.SearchSpace) != 1 {
		t.X = TrajectoryAxis{Label: "iteration"}
		for i, it := range doc.Iterations {
			xs[i] = float64(it.IterationIdx)
		}
		return xs, nil
	}
	dim := doc.Config.SearchSpace[0]
	t.X = TrajectoryAxis{Label: paramLabel(dim), Param: dim.Path}
	for i, it := range doc.Iterations {
		x, ok := search.Number(it.VariationValues[dim.Path])
		if !ok {
			return nil, fmt.Errorf("iteration %d of search_history.json has no number for %s in variation_values", it.IterationIdx, dim.Path)
		}
		xs[i] = x
	}
	t.X.Log = dim.Log || dim.Lo > 0 && dim.Hi >= 100*dim.Lo
	for _, x := range xs {
		t.X.Log = t.X.Log && x > 0
	}
	return xs, nil
}

// objectivePanel is the objective's mean at each probe, marked with the
// probe's verdict; with best-so-far over the iterations when asked.
func objectivePanel(doc search.HistoryDoc, o search.ObjectiveDoc, xs []float64, h *search.History, best bool) TrajectoryPanel {
	key := o.Metric + "." + o.Stat
	p := TrajectoryPanel{Key: key, Label: statLabel(o.Metric, o.Stat) + better(direction(o.Direction))}
	conf := doc.Config.ConfidenceLevel
	if !(conf > 0 && conf < 1) {
		conf = 0.95
	}
	bestY := math.NaN()
	for i, it := range doc.Iterations {
		if len(it.ObjectiveValues) == 0 || !finite(it.ObjectiveValues[0]) {
			continue
		}
		m := ProbeMark{Iteration: it.IterationIdx, X: xs[i], Y: point(it.ObjectiveValues[0]), Verdict: verdictOf(doc, it), Trials: trialValues(h, i, key)}
		if len(m.Trials) >= 2 {
			a := stats.Aggregate(m.Trials, conf)
			m.Y.Low, m.Y.High = a.CILow, a.CIHigh
		}
		p.Probes = append(p.Probes, m)
		if best && m.Verdict != search.Fail && m.Verdict != search.Ambiguous {
			if math.IsNaN(bestY) || strings.EqualFold(o.Direction, string(search.Minimize)) == (m.Y.Mean < bestY) {
				bestY = m.Y.Mean
			}
		}
		if best && !math.IsNaN(bestY) {
			p.BestSoFar = append(p.BestSoFar, XY{X: xs[i], Y: bestY})
		}
	}
	return p
}

// slaPanel is filter i's mean at each probe that measured it, with the
// verdict's bounds and the filter's verdict.
func slaPanel(doc search.HistoryDoc, i int, f search.Filter, xs []float64, h *search.History) TrajectoryPanel {
	p := TrajectoryPanel{Key: f.Key(), Label: statLabel(f.Metric, f.Stat), SLA: &f}
	for j, it := range doc.Iterations {
		if i >= len(it.SLA) || it.SLA[i].Filter != f || it.SLA[i].Observed == nil {
			continue
		}
		fd := it.SLA[i]
		m := ProbeMark{Iteration: it.IterationIdx, X: xs[j], Y: point(*fd.Observed), Verdict: fd.Verdict, Trials: trialValues(h, j, f.Key())}
		if fd.Lower != nil && fd.Upper != nil && fd.N >= 2 {
			m.Y.Low, m.Y.High = *fd.Lower, *fd.Upper
		}
		p.Probes = append(p.Probes, m)
	}
	return p
}

// curveFit is prefill-ttft-curve's fit over the panel's means, as
// prefill_curve.json has it.
func curveFit(probes []ProbeMark) *search.Fit {
	xs, ys := make([]float64, len(probes)), make([]float64, len(probes))
	for i, m := range probes {
		xs[i], ys[i] = m.X, m.Y.Mean
	}
	if fit, ok := search.FitCurve(xs, ys, search.CurveR2Floor); ok {
		return &fit
	}
	return nil
}

func bracketOf(b *search.BoundaryDoc) *TrajectoryBracket {
	out := &TrajectoryBracket{Pass: math.NaN(), Fail: math.NaN()}
	var parts []string
	if b.FeasibleMax != nil {
		if x, ok := search.Number(b.FeasibleMax.Value); ok {
			out.Pass = x
			parts = append(parts, fmtNum(x)+" passed")
		}
	}
	// The bracket's upper end is the lowest failure above the highest pass;
	// a failure below it says the SLA is not monotonic in the load.
	fail, low := b.Ends()
	below := math.NaN()
	if x, ok := failValue(low); ok {
		below = x
	}
	switch x, ok := failValue(fail); {
	case ok:
		out.Fail = x
		parts = append(parts, fmtNum(x)+" failed")
	case !math.IsNaN(below):
		parts = append(parts, "nothing failed above it")
	}
	if !math.IsNaN(below) {
		parts = append(parts, "not monotonic: "+fmtNum(below)+" failed below")
	}
	var amb []string
	for _, v := range b.Ambiguous {
		if x, ok := search.Number(v); ok {
			out.Ambiguous = append(out.Ambiguous, x)
			amb = append(amb, fmtNum(x))
		}
	}
	if len(amb) > 0 {
		parts = slices.Insert(parts, min(len(parts), 1), strings.Join(amb, ", ")+" ambiguous")
	}
	out.Label = "bracket: " + strings.Join(parts, ", ")
	return out
}

// failValue is a failure's value, if it has a number.
func failValue(f *search.InfeasibleDoc) (float64, bool) {
	if f == nil {
		return math.NaN(), false
	}
	return search.Number(f.Value)
}

// verdictOf is an iteration's verdict: "" when the search has no SLA
// filter; from feasible in AIPerf's own history, which has no verdicts.
func verdictOf(doc search.HistoryDoc, it search.IterationDoc) search.Outcome {
	switch {
	case len(doc.Config.SLAFilters) == 0:
		return ""
	case it.Verdict != "":
		return it.Verdict
	case it.Feasible:
		return search.Pass
	}
	return search.Fail
}

// trialValues are the finite values of key over probe i's successful
// trials in h (nil without h).
func trialValues(h *search.History, i int, key string) []float64 {
	if h == nil || i >= len(h.Probes) {
		return nil
	}
	var out []float64
	for _, tr := range h.Probes[i].Trials {
		if v, ok := tr.Values[key]; tr.OK && ok && finite(v) {
			out = append(out, v)
		}
	}
	return out
}

// judged tells whether the panel's probes carry verdicts (the search has
// SLA filters).
func (p TrajectoryPanel) judged() bool {
	return slices.ContainsFunc(p.Probes, func(m ProbeMark) bool { return m.Verdict != "" })
}

// values are every number a panel draws.
func (p TrajectoryPanel) values() []float64 {
	var out []float64
	for _, m := range p.Probes {
		out = append(out, m.Y.Mean)
		if m.Y.HasCI() {
			out = append(out, m.Y.Low, m.Y.High)
		}
		out = append(out, m.Trials...)
	}
	if p.SLA != nil {
		out = append(out, p.SLA.Threshold)
	}
	return out
}

// logSpan tells whether values are all above 0 and span two decades.
func logSpan(vs []float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if !(v > 0) {
			return false
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return len(vs) > 0 && hi >= 100*lo
}

func trajectoryTitle(doc search.HistoryDoc) string {
	name := doc.Config.Planner
	if doc.Recipe != nil {
		name = *doc.Recipe
	}
	return fmt.Sprintf("%s: %d probes, %d trials against %d for the grid", name, len(doc.Iterations), doc.TrialsSpent, doc.GridEquivalent.Trials)
}

// paramNamesLong title the searched parameters' axes.
var paramNamesLong = map[string]string{
	"synthetic_input_tokens_mean": "input sequence length (tokens)", "output_tokens_mean": "output sequence length (tokens)",
	"request_rate": "request rate (requests/sec)",
}

func paramLabel(d search.SpaceDoc) string {
	if l, ok := paramNamesLong[d.Name]; ok {
		return l
	}
	if d.Name != "" {
		return d.Name
	}
	return d.Path
}

// statLabel titles a statistic's axis: "TTFT p95 (ms)".
func statLabel(metric, stat string) string {
	name, ok := shortNames[metric]
	if !ok {
		name = strings.ReplaceAll(metric, "_", " ")
	}
	if stat != "avg" {
		name += " " + stat
	}
	if u := metrics.UnitOf(metric); u != "" {
		name = fmt.Sprintf("%s (%s)", name, u)
	}
	return name
}

// direction is an objective's direction as better() reads it.
type direction string

func (d direction) String() string {
	switch strings.ToUpper(string(d)) {
	case "MAXIMIZE":
		return "higher"
	case "MINIMIZE":
		return "lower"
	}
	return ""
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func point(mean float64) Interval { return Interval{Mean: mean, Low: math.NaN(), High: math.NaN()} }

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
