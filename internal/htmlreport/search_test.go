package htmlreport_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/browsertest"
	"github.com/aiperf-go/aiperf/internal/htmlreport"
	"github.com/aiperf-go/aiperf/internal/plot/plottest"
	"github.com/aiperf-go/aiperf/internal/search"
)

// slaSearch is plottest's example search: 7 passed, 8 and 9 ambiguous,
// 10 failed.
func slaSearch(t testing.TB) htmlreport.Search {
	t.Helper()
	h, doc, err := plottest.NoisySLASearch()
	require.NoError(t, err)
	require.NotNil(t, doc.BoundarySummary)
	require.Len(t, doc.BoundarySummary.Ambiguous, 2)
	return htmlreport.Search{Name: "sla", Doc: doc, History: &h}
}

func TestReportSearchSection(t *testing.T) {
	db := twoSweeps(t, 2, 2)
	s := slaSearch(t)
	html := string(writeReport(t, load(t, db, "fast"), filepath.Join(t.TempDir(), "r.html"), s))
	for _, want := range []string{
		`<a href="#searches">Searches</a>`,
		`<section id="searches">`,
		`<h3>sla</h3>`,
		`<dd>max-concurrency-under-sla (monotonic_sla)</dd>`,
		`<dd>time_to_first_token:p95:lt:85 at 95.0% confidence</dd>`,
		fmt.Sprintf(`<dd>%d probes, %d trials, against %d trials for the %d-cell grid it replaced</dd>`,
			len(s.Doc.Iterations), s.Doc.TrialsSpent, s.Doc.GridEquivalent.Trials, s.Doc.GridEquivalent.Cells),
		`<dd>` + *s.Doc.ConvergenceReason + `</dd>`,
		`id="fig-search-0-trajectory"`,
		`<caption>The bracket: phases.profiling.concurrency</caption>`,
		`<td>ambiguous between</td><td class="num">8, 9</td>`,
	} {
		assert.Contains(t, html, want)
	}
	// The search comes before the sweep tables.
	assert.Less(t, strings.Index(html, `id="searches"`), strings.Index(html, `id="tables"`))

	// A probe row per iteration, classed by its verdict, with each
	// filter's mean, bounds and verdict.
	probes := section(t, html, `id="search-0-probes"`)
	rows := regexp.MustCompile(`<tr class="(pass|fail|ambiguous)">`).FindAllStringSubmatch(probes, -1)
	require.Len(t, rows, len(s.Doc.Iterations))
	for i, it := range s.Doc.Iterations {
		assert.Equal(t, string(it.Verdict), rows[i][1], "iteration %d", i)
		f := it.SLA[0]
		assert.Contains(t, probes, fmt.Sprintf("%.2f [%.2f, %.2f] %s", *f.Observed, *f.Lower, *f.Upper, f.Verdict))
	}
	bracket := section(t, html, `id="search-0-bracket"`)
	b := s.Doc.BoundarySummary
	assert.Contains(t, bracket, fmt.Sprintf(`<td>highest pass</td><td class="num">%d</td><td class="num">%d</td>`, b.FeasibleMax.Value, b.FeasibleMax.IterationIdx))
	assert.Contains(t, bracket, fmt.Sprintf(`<td>lowest fail</td><td class="num">%d</td>`, b.InfeasibleMin.Value))
	assert.Contains(t, bracket, "time_to_first_token:p95:lt:85: observed ")
}

// A failure below the highest pass (the SLA not monotonic in the load) is
// not the bracket's upper end: the table shows the failure above the pass
// as the lowest fail and the one below apart, with a note.
func TestReportSearchNotMonotonic(t *testing.T) {
	db := twoSweeps(t, 1, 1)
	s := slaSearch(t)
	b := *s.Doc.BoundarySummary
	fail := b.InfeasibleMin
	b.InfeasibleAbove, b.InfeasibleMin = fail, &search.InfeasibleDoc{Value: int64(2), IterationIdx: 5, Trials: 3}
	s.Doc.BoundarySummary = &b
	html := string(writeReport(t, load(t, db, "fast"), filepath.Join(t.TempDir(), "r.html"), s))
	bracket := section(t, html, `id="search-0-bracket"`)
	assert.Contains(t, bracket, fmt.Sprintf(`<td>lowest fail</td><td class="num">%d</td>`, fail.Value))
	assert.Contains(t, bracket, `<td>failed below</td><td class="num">2</td><td class="num">5</td><td class="num">3</td>`)
	assert.Contains(t, html, "not monotonic: 2 failed below the highest pass")

	// AIPerf's own history has no infeasible_above: its infeasible_min
	// below feasible_max is placed by value, and nothing failed above.
	b.InfeasibleAbove = nil
	html = string(writeReport(t, load(t, db, "fast"), filepath.Join(t.TempDir(), "r2.html"), s))
	bracket = section(t, html, `id="search-0-bracket"`)
	assert.Contains(t, bracket, `<td>lowest fail</td><td class="num">none failed above</td>`)
	assert.Contains(t, bracket, `<td>failed below</td><td class="num">2</td>`)
}

// A search with nothing to draw still has its section, saying why.
func TestReportSearchWithoutProbes(t *testing.T) {
	db := twoSweeps(t, 1, 1)
	s := slaSearch(t)
	s.Doc.Iterations, s.Doc.BoundarySummary, s.Doc.BestTrials, s.History = nil, nil, nil, nil
	html := string(writeReport(t, load(t, db, "fast"), filepath.Join(t.TempDir(), "r.html"), s))
	assert.Contains(t, html, "No trajectory figure: the search has no probe yet: nothing to draw")
	assert.NotContains(t, html, `id="fig-search-0-trajectory"`)
	assert.NotContains(t, html, `id="search-0-bracket"`)
	assert.Contains(t, html, `id="search-0-probes"`)
}

// section is html from the element with attribute attr to the end of its
// table.
func section(t *testing.T, html, attr string) string {
	t.Helper()
	i := strings.Index(html, attr)
	require.GreaterOrEqual(t, i, 0, "the report has %s", attr)
	j := strings.Index(html[i:], "</table>")
	require.Positive(t, j)
	return html[i : i+j]
}

func TestSearchReportInChromium(t *testing.T) {
	db := twoSweeps(t, 2, 2)
	s := slaSearch(t)
	path := filepath.Join(t.TempDir(), "report.html")
	writeReport(t, load(t, db, "fast"), path, s)

	ctx, p := browse(t, path)
	assert.Greater(t, browsertest.Eval[float64](t, ctx, `document.querySelector("#fig-search-0-trajectory svg").getBoundingClientRect().height`), 200.0,
		"the trajectory is drawn with a height on the page")
	assert.Equal(t, len(s.Doc.Iterations), browsertest.Eval[int](t, ctx, `document.querySelectorAll("#search-0-probes tbody tr").length`))
	assert.Equal(t, 3, browsertest.Eval[int](t, ctx, `document.querySelectorAll("#search-0-bracket tbody tr").length`), "pass, ambiguous, fail")
	// Sorting the probes by verdict keeps every row.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#search-0-probes thead th:nth-child(5)`)))
	assert.Equal(t, len(s.Doc.Iterations), browsertest.Eval[int](t, ctx, `document.querySelectorAll("#search-0-probes tbody tr").length`))
	assert.Equal(t, "ambiguous", browsertest.Eval[string](t, ctx, `document.querySelector("#search-0-probes tbody tr td:nth-child(5)").textContent`))
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	notBlank(t, shot)
	if out := os.Getenv("AIPERF_SEARCH_SHOT"); out != "" {
		require.NoError(t, os.WriteFile(out, shot, 0o644))
	}
	assert.Empty(t, p.Problems(), "no console error, exception or request leaving file://")
}

// A search without SLA filters (concurrency-ramp) has no verdicts and no
// bracket, though search_history.json calls every probe feasible.
func TestReportUnjudgedSearch(t *testing.T) {
	db := twoSweeps(t, 1, 1)
	r, err := search.ExpandRecipe(search.RecipeConcurrencyRamp, search.RecipeInputs{})
	require.NoError(t, err)
	_, doc, err := plottest.Drive(r.Config, func(at map[string]float64, _, _ int) map[string]float64 {
		return map[string]float64{"request_latency.p99": 100 + at["concurrency"]}
	})
	require.NoError(t, err)
	html := string(writeReport(t, load(t, db, "fast"), filepath.Join(t.TempDir(), "r.html"), htmlreport.Search{Name: "ramp", Doc: doc}))
	assert.Contains(t, html, `id="fig-search-0-trajectory"`)
	assert.NotContains(t, html, `id="search-0-bracket"`)
	probes := section(t, html, `id="search-0-probes"`)
	assert.Equal(t, len(doc.Iterations), strings.Count(probes, "<tr>")-1, "unclassed rows, after the header's")
	assert.NotContains(t, probes, "pass")
}
