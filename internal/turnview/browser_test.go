package turnview

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

// chromium finds a chromium to open the page in; without one the test
// skips, except in CI.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "chromium-headless-shell", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium in PATH, and CI is set (apt-get install chromium)")
	}
	t.Skip("no chromium in PATH (apt-get install chromium): the viewer is not opened in a browser")
	return ""
}

// TestViewerInChromium opens a page of hostile texts: its style and
// script run under its policy with no error, nothing is requested, no
// text of the export runs as script, and following a repeat's link opens
// the collapsed turn the message is shown in.
func TestViewerInChromium(t *testing.T) {
	bin := chromium(t)
	rs := session("c", "s", 3, 1)
	rs[0].msgs = append(rs[0].msgs, map[string]any{"role": "user", "content": `<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>`})
	for i := 1; i < len(rs); i++ {
		rs[i].msgs = append([]any{rs[0].msgs[1]}, rs[i].msgs...)
	}
	path := filepath.Join(t.TempDir(), FileName)
	page := render(t, build(t, writeExport(t, reqs(rs)...), defaults))
	require.NoError(t, os.WriteFile(path, []byte(page), 0o644))

	var mu sync.Mutex
	var problems []string
	add := func(s string) { mu.Lock(); problems = append(problems, s); mu.Unlock() }
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU)
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
			add("exception: " + e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				add("log: " + e.Entry.Text) // a policy violation, among others
			}
		case *network.EventRequestWillBeSent:
			if e.Request.URL != url {
				add("request: " + e.Request.URL)
			}
		}
	}))
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body")))

	truth := func(js string) bool {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		require.NoError(t, err, js)
		return v
	}
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
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, problems, "no console error, policy violation or request: %s", strings.Join(problems, "; "))
}
