package swimlane

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/browsertest"
)

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

	ctx, page := browsertest.Open(t, path, 1280, 900)
	browsertest.WaitFor(t, ctx, `document.getElementById("lanes").getBoundingClientRect().height > 40 && `+
		`document.getElementById("range").textContent !== ""`)
	assert.Greater(t, browsertest.Eval[float64](t, ctx, `document.getElementById("lanes").getBoundingClientRect().height`), 40.0)
	assert.Greater(t, browsertest.Eval[float64](t, ctx, `document.getElementById("conc").getBoundingClientRect().width`), 400.0)
	rng := `document.getElementById("range").textContent`
	text := browsertest.Eval[string](t, ctx, rng)
	assert.Equal(t, "showing 0 s to 1.01 s", text)

	// Hover the middle of s1's first request (0 to 0.3 s, row 0).
	hover := `(function () {
	  var c = document.getElementById("lanes"), b = c.getBoundingClientRect(), w = c.clientWidth;
	  var x = b.left + 56 + 0.15 / 1.01 * (w - 56 - 14), y = b.top + 8 + 10;
	  c.dispatchEvent(new MouseEvent("mousemove", {clientX: x, clientY: y, bubbles: true}));
	  var tip = document.getElementById("tip");
	  return tip.hidden ? "" : tip.textContent;
	})()`
	text = browsertest.Eval[string](t, ctx, hover)
	assert.Contains(t, text, "session s1")
	assert.Contains(t, text, "conversation c1, turn 0")
	assert.Contains(t, text, "TTFT 20.5 ms")

	zoom := `document.getElementById("lanes").dispatchEvent(new WheelEvent("wheel", {deltaY: -100, clientX: 400, clientY: 60, bubbles: true, cancelable: true}))`
	browsertest.Eval[bool](t, ctx, zoom)
	browsertest.WaitFor(t, ctx, rng+` !== "showing 0 s to 1.01 s"`) // the wheel zoomed in
	require.NoError(t, chromedp.Do(ctx, chromedp.Click("#reset")))
	browsertest.WaitFor(t, ctx, rng+` === "showing 0 s to 1.01 s"`)
	assert.Empty(t, page.Problems(), "no console error, exception or request leaving file://")
}
