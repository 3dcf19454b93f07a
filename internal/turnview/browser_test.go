package turnview

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/browsertest"
)

// TestViewerInChromium opens a page of hostile texts: its style and
// script run under its policy with no error, nothing is requested, no
// text of the export runs as script, and following a repeat's link opens
// the collapsed turn the message is shown in.
func TestViewerInChromium(t *testing.T) {
	rs := session("c", "s", 3, 1)
	rs[0].msgs = append(rs[0].msgs, map[string]any{"role": "user", "content": `<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>`})
	for i := 1; i < len(rs); i++ {
		rs[i].msgs = append([]any{rs[0].msgs[1]}, rs[i].msgs...)
	}
	path := filepath.Join(t.TempDir(), FileName)
	page := render(t, build(t, writeExport(t, reqs(rs)...), defaults))
	require.NoError(t, os.WriteFile(path, []byte(page), 0o644))

	ctx, browser := browsertest.Open(t, path, 1280, 900)

	truth := func(js string) bool { t.Helper(); return browsertest.Eval[bool](t, ctx, js) }
	assert.True(t, truth(`getComputedStyle(document.querySelector("pre")).whiteSpace === "pre-wrap"`), "the inline style applies")
	assert.False(t, truth(`window.pwned !== undefined`), "no text of the export ran")

	// Open the conversation and its last turn, follow a repeat's link to
	// the first turn, still closed.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#c0 > summary`), chromedp.Click(`#c0 > details.turn:nth-of-type(3) > summary`)))
	assert.False(t, truth(`document.querySelector("#c0 > details.turn").open`), "the first turn starts closed")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#c0 > details.turn:nth-of-type(3) a.ref`)))
	assert.True(t, truth(`(function () {
		var m = document.getElementById(location.hash.slice(1)), first = document.querySelector("#c0 > details.turn");
		return !!m && m.closest("details.turn") === first && first.open;
	})()`), "the link opened the turn its message is shown in")
	assert.False(t, truth(`window.pwned !== undefined`))
	assert.Empty(t, browser.Problems(), "no console error, policy violation or request")
}
