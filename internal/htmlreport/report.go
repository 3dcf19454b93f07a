package htmlreport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

//go:embed report.css
var css string

//go:embed report.js
var script string

//go:embed report.html.tmpl
var page string

var tmpl = template.Must(template.New("report").Parse(page))

// Options say what the report's header shows, and the searches it shows
// first.
type Options struct {
	Store     string    // the store's path
	Version   string    // aiperf's
	Generated time.Time // when the report was written
	// Searches are the reported sweeps that are searches, each shown in a
	// section of its own; none leaves the section out.
	Searches []Search
}

// Figure sizes in the report, in pixels (SVG scales to the page).
const (
	figureWidth  = 960
	figureHeight = 540
)

// Write renders the report of d.
func Write(w io.Writer, d *plot.Data, opt Options) error {
	v, err := build(d, opt)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, v); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	// Names from the store or a server (sweep, cell, model, a hook's
	// error) may hold control characters: the page shows them escaped, as
	// its figures (plot.Label) and the terminal do.
	_, err = io.WriteString(w, plot.Markup(buf.String()))
	return err
}

// view is what the template shows.
type view struct {
	Title, Subject, Store, Version, Generated string
	Searches                                  []searchView
	CSS                                       template.CSS
	JS                                        template.JS
	Configs                                   []config
	ConfigDiffs                               [][]string // key, then a value per side
	Sides                                     []string
	Tables                                    []table
	Verdicts                                  []table
	Figures                                   []figure
	Cells                                     []cell
	Notes                                     []string
	Hooks                                     table
	Audit                                     table
	AuditProblems                             int
}

type config struct {
	Name, JSON string
}

type table struct {
	ID, Title string
	Header    []string
	Right     []bool // per column: right-aligned (values)
	Rows      []row
	Notes     []string
}

type row struct {
	Class string
	Cells []string
}

type figure struct {
	Name, Title string
	Series      []series
	SVG         template.HTML
}

type series struct{ Name, Color string }

type cell struct {
	Label   string
	Figures []figure
}

func build(d *plot.Data, opt Options) (*view, error) {
	v := &view{Title: "aiperf report", Store: opt.Store, Version: opt.Version,
		Generated: opt.Generated.UTC().Format(time.RFC3339), CSS: template.CSS(css), JS: template.JS(script)}
	copt := compare.Options{ConfidenceLevel: d.Confidence}
	searches, err := searchViews(opt.Searches)
	if err != nil {
		return nil, err
	}
	v.Searches = searches
	var sides [][]store.RunRow
	if len(d.Sweeps) > 0 {
		v.Sides = d.SweepNames()
		v.Subject = "sweeps " + strings.Join(v.Sides, ", ")
		for i, s := range d.Sweeps {
			rep := compare.Sweep(s, copt)
			t := fromCompare(fmt.Sprintf("sweep-%d", i), rep.Table())
			pareto := len(t.Header) - 1
			for j := range t.Rows {
				if t.Rows[j].Cells[pareto] == "yes" {
					t.Rows[j].Class = "pareto"
				}
			}
			v.Tables = append(v.Tables, t)
			var runs []store.RunRow
			for _, c := range s.Cells {
				runs = append(runs, c.Runs...)
			}
			sides = append(sides, runs)
		}
		for i := 1; i < len(d.Sweeps); i++ {
			diff := compare.SweepDiff(d.Sweeps[0], d.Sweeps[i], copt)
			v.Verdicts = append(v.Verdicts, verdictTable(fmt.Sprintf("verdict-%d", i), diff.Table()))
		}
	} else {
		for _, g := range d.Groups {
			v.Sides = append(v.Sides, g.Ref)
			sides = append(sides, g.Runs)
		}
		v.Subject = "runs " + strings.Join(v.Sides, ", ")
		v.Verdicts = append(v.Verdicts, verdictTable("verdict-0", compare.Groups(d.Groups, copt).Table()))
	}
	v.Title = "aiperf report: " + v.Subject
	if err := v.addConfigs(d, sides); err != nil {
		return nil, err
	}
	figs, notes := d.Figures()
	v.Notes = notes
	var labels []string
	byCell := map[string][]figure{}
	for _, f := range figs {
		fig, err := inline(f)
		if err != nil {
			return nil, err
		}
		if f.Cell == "" {
			v.Figures = append(v.Figures, fig)
			continue
		}
		if _, ok := byCell[f.Cell]; !ok {
			labels = append(labels, f.Cell)
		}
		byCell[f.Cell] = append(byCell[f.Cell], fig)
	}
	for _, l := range labels {
		v.Cells = append(v.Cells, cell{Label: l, Figures: byCell[l]})
	}
	v.Hooks, v.Audit, v.AuditProblems = runTables(d, sides)
	return v, nil
}

// fromCompare turns a compare table into an HTML one.
func fromCompare(id string, t compare.Table) table {
	out := table{ID: id, Title: t.Title, Header: t.Header, Notes: t.Notes}
	for i := range t.Header {
		out.Right = append(out.Right, i < len(t.Align) && t.Align[i] != 'l')
	}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, row{Cells: r})
	}
	return out
}

// verdictTable is a compare table whose verdict cells are coloured.
func verdictTable(id string, t compare.Table) table {
	out := fromCompare(id, t)
	col := slices.IndexFunc(t.Header, func(h string) bool { return strings.HasSuffix(h, "verdict") })
	if col < 0 {
		return out
	}
	for i := range out.Rows {
		verdict := out.Rows[i].Cells[col]
		for _, word := range []string{"better", "worse", "equivalent", "inconclusive"} {
			if strings.HasPrefix(verdict, word) {
				out.Rows[i].Class = word
			}
		}
	}
	return out
}

// addConfigs shows each side's configuration (its first complete run's,
// secrets removed when it was stored) and the settings that differ.
func (v *view) addConfigs(d *plot.Data, sides [][]store.RunRow) error {
	flat := make([]map[string]string, len(sides))
	for i, runs := range sides {
		var r *result.Run
		for _, row := range runs {
			if run := d.Runs[row.ID]; run != nil && (r == nil || row.Status == result.StatusComplete) {
				r = run
				if row.Status == result.StatusComplete {
					break
				}
			}
		}
		if r == nil {
			continue
		}
		b, err := json.MarshalIndent(r.Config, "", "  ")
		if err != nil {
			return fmt.Errorf("encode the configuration of %s: %w", v.Sides[i], err)
		}
		v.Configs = append(v.Configs, config{Name: v.Sides[i], JSON: string(b)})
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("decode the configuration of %s: %w", v.Sides[i], err)
		}
		flat[i] = map[string]string{}
		flatten("", m, flat[i])
	}
	if len(sides) < 2 {
		return nil
	}
	var keys []string
	for _, f := range flat {
		for k := range f {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		vals := make([]string, len(flat))
		for i, f := range flat {
			vals[i] = f[k]
		}
		if len(slices.Compact(slices.Clone(vals))) > 1 {
			v.ConfigDiffs = append(v.ConfigDiffs, append([]string{k}, vals...))
		}
	}
	return nil
}

func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			flatten(strings.TrimPrefix(prefix+"."+k, "."), e, out)
		}
	default:
		b, _ := json.Marshal(x)
		out[prefix] = string(b)
	}
}

// svgHeader matches what precedes the <svg> element of gonum's SVG, and
// svgSize its fixed size, which the page replaces so that a figure scales.
var (
	svgHeader = regexp.MustCompile(`(?s)^.*?(<svg )`)
	svgSize   = regexp.MustCompile(`<svg width="[^"]*" height="[^"]*"`)
)

// inline encodes a figure as SVG for the page.
func inline(f plot.Figure) (figure, error) {
	var buf bytes.Buffer
	if err := f.Encode(&buf, "svg", figureWidth, figureHeight); err != nil {
		return figure{}, err
	}
	svg := svgHeader.ReplaceAllString(buf.String(), "$1")
	svg = svgSize.ReplaceAllString(svg, `<svg role="img" aria-label="`+template.HTMLEscapeString(f.Title)+`"`)
	fig := figure{Name: f.Name, Title: f.Title, SVG: template.HTML(svg)} // gonum escapes every text it writes
	for i, s := range f.Series {
		fig.Series = append(fig.Series, series{Name: s, Color: plot.Color(i)})
	}
	return fig, nil
}

// maxQuietRows bounds the rows of runs and calls without a problem; past
// it they are counted in a note (a thousand "verified" rows hide the one
// that matters, and slow the page).
const maxQuietRows = 200

// runTables lists the control-hook calls and every run's audit: the KV
// reset verdict, CLIENT-BOUND and warnings. Problems come first and are all
// listed; past maxQuietRows the others are counted by kind.
func runTables(d *plot.Data, sides [][]store.RunRow) (hooks, audit table, problems int) {
	hooks = table{ID: "hooks", Title: "Control-hook calls",
		Header: []string{"run", "cell", "trial", "hook", "phase", "path", "status", "attempts", "ms", "ok", "note"},
		Right:  []bool{true, false, true, false, false, false, true, true, true, false, false}}
	audit = table{ID: "audit", Title: "Audit and KV-cache reset verification",
		Header: []string{"run", "cell", "trial", "status", "kv reset", "evidence", "client-bound", "warnings"},
		Right:  []bool{true, false, true, false, false, false, false, false}}
	var ok, okCalls []row
	for _, runs := range sides {
		for _, rr := range runs {
			r := d.Runs[rr.ID]
			if r == nil {
				continue
			}
			id, trial := strconv.FormatInt(rr.ID, 10), strconv.Itoa(rr.Trial)
			for _, c := range r.ControlHooks {
				note := strings.TrimSpace(c.Error + " " + c.Warning)
				line := row{Cells: []string{id, rr.CellLabel, trial, c.Hook, c.Phase, c.Path,
					strconv.Itoa(c.Status), strconv.Itoa(c.Attempts), numfmt.Fixed(c.DurationMs, 1),
					map[bool]string{true: "yes", false: "no"}[c.OK], note}}
				switch {
				case !c.OK:
					line.Class = "worse"
				case c.Warning != "":
					line.Class = "inconclusive"
				default:
					okCalls = append(okCalls, line)
					continue
				}
				hooks.Rows = append(hooks.Rows, line)
			}
			bound := ""
			if r.Audit.ClientBound {
				bound = "CLIENT-BOUND"
			}
			reset := r.Audit.KVReset
			if r.Audit.KVResetDetail != "" {
				reset += ": " + r.Audit.KVResetDetail
			}
			line := row{Cells: []string{id, rr.CellLabel, trial, rr.Status, reset, strings.Join(r.Audit.KVResetEvidence, ", "),
				bound, strings.Join(r.Audit.Warnings, "; ")}}
			if bound != "" || len(r.Audit.Warnings) > 0 || r.Audit.KVReset == result.ResetNotCleared || rr.Status != result.StatusComplete {
				line.Class = "worse"
				audit.Rows = append(audit.Rows, line)
				problems++
				continue
			}
			ok = append(ok, line)
		}
	}
	hooks.Rows, hooks.Notes = appendQuiet(hooks.Rows, okCalls, 3, "successful calls")
	audit.Rows, audit.Notes = appendQuiet(audit.Rows, ok, 4, "runs without a problem")
	return hooks, audit, problems
}

// appendQuiet appends at most maxQuietRows quiet rows and counts the others
// by the value of their column col.
func appendQuiet(rows, quiet []row, col int, what string) ([]row, []string) {
	if len(quiet) <= maxQuietRows {
		return append(rows, quiet...), nil
	}
	var kinds []string
	count := map[string]int{}
	for _, r := range quiet[maxQuietRows:] {
		k := r.Cells[col]
		if count[k] == 0 {
			kinds = append(kinds, k)
		}
		count[k]++
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s ×%d", k, count[k])
	}
	note := fmt.Sprintf("%d more %s, not listed: %s", len(quiet)-maxQuietRows, what, strings.Join(parts, ", "))
	return append(rows, quiet[:maxQuietRows]...), []string{note}
}
