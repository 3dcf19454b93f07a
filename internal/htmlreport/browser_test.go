package htmlreport_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/compare"
)

// chromium finds Debian's chromium (installed by .ci/run). Without one the
// test skips, except in CI, where it must run.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "chromium-headless-shell", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium in PATH, and CI is set: .ci/run installs Debian's chromium (apt-get install chromium)")
	}
	t.Skip("no chromium in PATH (apt-get install chromium): the report is not opened in a browser; CI runs this test")
	return ""
}

// page is what the browser saw of one report.
type page struct {
	problems []string // console errors, exceptions, requests not to file: or data:
	mu       sync.Mutex
}

func (p *page) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, s)
}

// browse opens a headless chromium that records console errors,
// exceptions and every request that is not for the file itself, and
// navigates to path.
func browse(t testing.TB, path string) (context.Context, *page) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1600))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	p := &page{}
	url := "file://" + path
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				p.add("console " + string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			p.add("exception: " + e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				p.add("log: " + e.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			if u := e.Request.URL; u != url && !strings.HasPrefix(u, "data:") {
				p.add("request: " + u)
			}
		}
	}))
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body")))
	return ctx, p
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t testing.TB, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

func TestReportInChromium(t *testing.T) {
	db := twoSweeps(t, 4, 2)
	path := filepath.Join(t.TempDir(), "report.html")
	d := load(t, db, "fast", "slow")
	figs, _ := d.Figures()
	writeReport(t, d, path)

	ctx, p := browse(t, path)
	plots := eval[int](t, ctx, `document.querySelectorAll("figure.plot").length`)
	assert.Equal(t, len(figs), plots, "every figure rendered")
	assert.Equal(t, plots, eval[int](t, ctx, `document.querySelectorAll("figure.plot svg").length`))
	assert.Greater(t, eval[float64](t, ctx, `document.querySelector("#fig-ttft_vs_throughput svg").getBoundingClientRect().height`), 200.0,
		"the SVG has a height on the page")
	assert.Equal(t, 4, eval[int](t, ctx, `document.querySelectorAll("#sweep-0 tbody tr").length`), "a row per cell")
	assert.Equal(t, 4*len(compare.DefaultKeys), eval[int](t, ctx, `document.querySelectorAll("#verdict-1 tbody tr").length`),
		"a row per matched cell and statistic")
	assert.Equal(t, 2*4*2, eval[int](t, ctx, `document.querySelectorAll("#audit tbody tr").length`), "a row per run")

	// Sort the first sweep's table by concurrency, twice: descending.
	first := `document.querySelector("#sweep-0 tbody tr td").textContent`
	assert.Equal(t, "1", eval[string](t, ctx, first))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#sweep-0 thead th`), chromedp.Click(`#sweep-0 thead th`)))
	assert.Equal(t, "4", eval[string](t, ctx, first), "sorted by concurrency, descending")

	// Hide the first sweep on the Pareto view, then show it again.
	hidden := `Array.from(document.querySelectorAll("#fig-ttft_vs_throughput svg [style]")).filter(e => e.style.display === "none").length`
	box := `#fig-ttft_vs_throughput input[data-color]`
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(box)))
	assert.Greater(t, eval[int](t, ctx, hidden), 4, "the series' points, whiskers and frontier are hidden")
	assert.False(t, eval[bool](t, ctx, `document.querySelector("`+box+`").checked`))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(box)))
	assert.True(t, eval[bool](t, ctx, `document.querySelector("`+box+`").checked`))
	assert.Zero(t, eval[int](t, ctx, hidden))

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	require.NoError(t, err)
	notBlank(t, shot)
	assert.Empty(t, p.problems, "no console error, exception or request leaving file://")
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
