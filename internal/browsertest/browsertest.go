// Package browsertest opens an offline HTML page (the report, the
// swim-lane and turn-messages viewers) in a headless chromium for tests:
// every console error or warning, exception, error log entry (a content
// security policy violation among them) and request for anything but the
// page itself or a data: URL is kept as a problem, which a page that works
// offline has none of. Without a chromium the test skips, except in CI,
// where .ci/run installs Debian's and it must run.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Chromium is the path of a chromium, or skips t (fails it under CI).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "chromium-headless-shell", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium in PATH, and CI is set: .ci/run installs Debian's chromium (apt-get install chromium)")
	}
	t.Skip("no chromium in PATH (apt-get install chromium): the page is not opened in a browser; CI runs this test")
	return ""
}

// Page is what the browser saw of one page.
type Page struct {
	mu       sync.Mutex
	problems []string
}

func (p *Page) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, s)
}

// Problems are the console errors, exceptions, error log entries and
// requests leaving the page seen so far.
func (p *Page) Problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.problems...)
}

// Open starts a headless chromium of a width × height window that records
// the page's problems, and navigates to the file at path; the context is
// the page's, bounded by a hang guard of 90 s, ended with the test.
func Open(t testing.TB, path string, width, height int) (context.Context, *Page) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(width, height))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	p := &Page{}
	url := "file://" + path
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				p.add("console " + string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			p.add("exception: " + msg)
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

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](t testing.TB, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

// WaitFor evaluates the JavaScript condition js until it holds, looking
// again every 10 ms: a page's drawing and its answers to events are waited
// for, never given a fixed time. It fails t when the page's hang guard
// ends first.
func WaitFor(t testing.TB, ctx context.Context, js string) {
	t.Helper()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		require.NoError(t, err, js)
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the page never made %s true: %v", js, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
