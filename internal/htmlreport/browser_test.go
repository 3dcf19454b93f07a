package htmlreport_test

import (
	"bytes"
	"context"
	"image/png"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/browsertest"
	"github.com/aiperf-go/aiperf/internal/compare"
)

// browse opens path in a headless chromium at the report's window size.
func browse(t testing.TB, path string) (context.Context, *browsertest.Page) {
	t.Helper()
	return browsertest.Open(t, path, 1280, 1600)
}

func TestReportInChromium(t *testing.T) {
	db := twoSweeps(t, 4, 2)
	path := filepath.Join(t.TempDir(), "report.html")
	d := load(t, db, "fast", "slow")
	figs, _ := d.Figures()
	writeReport(t, d, path)

	ctx, p := browse(t, path)
	plots := browsertest.Eval[int](t, ctx, `document.querySelectorAll("figure.plot").length`)
	assert.Equal(t, len(figs), plots, "every figure rendered")
	assert.Equal(t, plots, browsertest.Eval[int](t, ctx, `document.querySelectorAll("figure.plot svg").length`))
	assert.Greater(t, browsertest.Eval[float64](t, ctx, `document.querySelector("#fig-ttft_vs_throughput svg").getBoundingClientRect().height`), 200.0,
		"the SVG has a height on the page")
	assert.Equal(t, 4, browsertest.Eval[int](t, ctx, `document.querySelectorAll("#sweep-0 tbody tr").length`), "a row per cell")
	assert.Equal(t, 4*len(compare.DefaultKeys), browsertest.Eval[int](t, ctx, `document.querySelectorAll("#verdict-1 tbody tr").length`),
		"a row per matched cell and statistic")
	assert.Equal(t, 2*4*2, browsertest.Eval[int](t, ctx, `document.querySelectorAll("#audit tbody tr").length`), "a row per run")

	// Sort the first sweep's table by concurrency, twice: descending.
	first := `document.querySelector("#sweep-0 tbody tr td").textContent`
	assert.Equal(t, "1", browsertest.Eval[string](t, ctx, first))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#sweep-0 thead th`), chromedp.Click(`#sweep-0 thead th`)))
	assert.Equal(t, "4", browsertest.Eval[string](t, ctx, first), "sorted by concurrency, descending")

	// Hide the first sweep on the Pareto view, then show it again.
	hidden := `Array.from(document.querySelectorAll("#fig-ttft_vs_throughput svg [style]")).filter(e => e.style.display === "none").length`
	box := `#fig-ttft_vs_throughput input[data-color]`
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(box)))
	assert.Greater(t, browsertest.Eval[int](t, ctx, hidden), 4, "the series' points, whiskers and frontier are hidden")
	assert.False(t, browsertest.Eval[bool](t, ctx, `document.querySelector("`+box+`").checked`))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(box)))
	assert.True(t, browsertest.Eval[bool](t, ctx, `document.querySelector("`+box+`").checked`))
	assert.Zero(t, browsertest.Eval[int](t, ctx, hidden))

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	require.NoError(t, err)
	notBlank(t, shot)
	assert.Empty(t, p.Problems(), "no console error, exception or request leaving file://")
}

// notBlank decodes a screenshot and checks it shows more than a few
// colours.
func notBlank(t *testing.T, shot []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	b := img.Bounds()
	colours := map[uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[r>>11<<10|g>>11<<5|bl>>11] = true
		}
	}
	assert.Greater(t, len(colours), 20, "the screenshot is not blank")
}
