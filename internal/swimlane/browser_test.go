package swimlane

import (
	"context"
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
)

// chromium finds a chromium; without one the test skips, except in CI.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "chromium-headless-shell", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium in PATH, and CI is set: .ci/run installs Debian's chromium (apt-get install chromium)")
	}
	t.Skip("no chromium in PATH (apt-get install chromium): the viewer is not opened in a browser; CI runs this test")
	return ""
}

// The viewer opens in chromium without an error or a request: it draws
// both panels, the wheel zooms the time axis, hovering a bar describes its
// request, and a double-click shows the whole run again.
func TestViewerInChromium(t *testing.T) {
	v := NewView(failedRun(t, true), Options{Target: 2})
	path := filepath.Join(t.TempDir(), "swim_lane.html")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, v.WriteHTML(f))
	require.NoError(t, f.Close())

	var mu sync.Mutex
	var problems []string
	add := func(s string) { mu.Lock(); problems = append(problems, s); mu.Unlock() }
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	url := "file://" + path
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				add("console " + string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			add("exception: " + e.ExceptionDetails.Text + " " + e.ExceptionDetails.Exception.Description)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				add("log: " + e.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			if u := e.Request.URL; u != url && !strings.HasPrefix(u, "data:") {
				add("request: " + u)
			}
		}
	}))
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body"), chromedp.Sleep(300*time.Millisecond)))
	assert.Greater(t, evalJS[float64](t, ctx, `document.getElementById("lanes").getBoundingClientRect().height`), 40.0)
	assert.Greater(t, evalJS[float64](t, ctx, `document.getElementById("conc").getBoundingClientRect().width`), 400.0)
	rng := `document.getElementById("range").textContent`
	text := evalJS[string](t, ctx, rng)
	assert.Equal(t, "showing 0 s to 1.01 s", text)

	// Hover the middle of s1's first request (0 to 0.3 s, row 0).
	hover := `(function () {
	  var c = document.getElementById("lanes"), b = c.getBoundingClientRect(), w = c.clientWidth;
	  var x = b.left + 56 + 0.15 / 1.01 * (w - 56 - 14), y = b.top + 8 + 10;
	  c.dispatchEvent(new MouseEvent("mousemove", {clientX: x, clientY: y, bubbles: true}));
	  var tip = document.getElementById("tip");
	  return tip.hidden ? "" : tip.textContent;
	})()`
	text = evalJS[string](t, ctx, hover)
	assert.Contains(t, text, "session s1")
	assert.Contains(t, text, "conversation c1, turn 0")
	assert.Contains(t, text, "TTFT 20.5 ms")

	zoom := `document.getElementById("lanes").dispatchEvent(new WheelEvent("wheel", {deltaY: -100, clientX: 400, clientY: 60, bubbles: true, cancelable: true}))`
	evalJS[bool](t, ctx, zoom)
	require.NoError(t, chromedp.Do(ctx, chromedp.Sleep(200*time.Millisecond)))
	assert.NotEqual(t, "showing 0 s to 1.01 s", evalJS[string](t, ctx, rng), "the wheel zoomed in")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click("#reset"), chromedp.Sleep(200*time.Millisecond)))
	assert.Equal(t, "showing 0 s to 1.01 s", evalJS[string](t, ctx, rng))
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, problems, "no console error, exception or request leaving file://")
}

// evalJS evaluates a JavaScript expression in the page.
func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}
