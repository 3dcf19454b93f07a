package dashboard_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/dashboard"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
)

func startMock(tb testing.TB, cfg mock.Config) string {
	srv, err := mock.New(cfg) // token counts do not matter here
	require.NoError(tb, err)
	ts := httptest.NewServer(srv.Handler())
	tb.Cleanup(ts.Close)
	return ts.URL
}

// profile is a short streamed load of small requests.
func profile(url string, requests, concurrency int) plan.Profile {
	p := plan.NewProfile()
	p.Model, p.URL, p.Streaming = []string{"mock-model"}, []string{url}, true
	p.SyntheticInputTokensMean, p.OutputTokensMean, p.NumDatasetEntries = 16, plan.Ptr(4), 4
	p.Concurrency, p.RequestCount = plan.Ptr(concurrency), plan.Ptr(requests)
	return p
}

func TestUsableOnlyOnTerminals(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err)
	defer f.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	for name, out := range map[string]io.Writer{"pipe": w, "file": f, "/dev/null (a character device)": null,
		"buffer": &bytes.Buffer{}, "nil": nil} {
		assert.False(t, dashboard.Usable(out, out), name)
	}
	// The positive case, on a pseudo-terminal, is the CLI's
	// TestProfileDashboardOnATerminal.
}

// TestDashboardFollowsARun runs a real load against the mock with the
// dashboard attached (drawing into a buffer) and checks the last frame it
// drew against the run's own result.
func TestDashboardFollowsARun(t *testing.T) {
	url := startMock(t, mock.Config{Fast: true, ErrorRate: 10, RandomSeed: 3})
	var last string
	var screen bytes.Buffer
	d := dashboard.Start(&screen, dashboard.Options{Title: "mock-model", Streaming: true,
		Program: []tea.ProgramOption{tea.WithWindowSize(120, 20), tea.WithFilter(func(m tea.Model, msg tea.Msg) tea.Msg {
			if _, ok := msg.(tea.QuitMsg); ok {
				last = m.(dashboard.Model).Render()
			}
			return msg
		})}})
	p := profile(url, 300, 4)
	p.WarmupRequestCount = plan.Ptr(10)
	run, err := bench.Run(context.Background(), bench.Options{Profile: p, Version: "test", Watch: d, Log: d.Log()})
	require.NoError(t, err)
	fmt.Fprintln(d.Log(), "a line logged while it draws")
	require.NoError(t, d.Close())
	fmt.Fprintln(d.Log(), "a line logged after") // to the fallback (discarded), never blocking

	ok, failed := 0, 0
	for _, r := range run.Records {
		if r.Phase == "profiling" {
			if r.OK() {
				ok++
			} else {
				failed++
			}
		}
	}
	require.NotZero(t, failed, "the mock injects errors")
	for _, want := range []string{"aiperf dashboard · mock-model", "phase       profiling · ", "done",
		"300/300 requests", "in flight   0 of 4 slots",
		fmt.Sprintf("(%d requests)", ok), // every successful profiling request is in the percentiles
		fmt.Sprintf("errors      %d · HTTPError 500: %d", failed, failed),
	} {
		assert.Contains(t, last, want)
	}
	out := screen.String()
	assert.Contains(t, out, "aiperf dashboard · mock-model")
	assert.Contains(t, out, "a line logged while it draws")
	assert.Contains(t, out, "\x1b[?25h", "the cursor is shown again")
}

// BenchmarkRun measures a run's throughput against the mock without and
// with the dashboard (drawing into io.Discard), the two alternating, in
// turns first, so that the machine's other load falls on both alike:
// compare the req/s.
func BenchmarkRun(b *testing.B) {
	url := startMock(b, mock.Config{Fast: true})
	const requests = 4000
	var sum [2]float64
	n := 0
	for b.Loop() {
		order := []bool{false, true}
		if n%2 == 1 {
			order = []bool{true, false} // neither goes always first
		}
		for _, withDashboard := range order {
			i := 0
			if withDashboard {
				i = 1
			}
			o := bench.Options{Profile: profile(url, requests, 32), Version: "test"}
			var d *dashboard.Dashboard
			if withDashboard {
				d = dashboard.Start(io.Discard, dashboard.Options{Title: "bench", Streaming: true,
					Program: []tea.ProgramOption{tea.WithWindowSize(120, 20)}})
				o.Watch = d
			}
			run, err := bench.Run(context.Background(), o)
			require.NoError(b, err)
			if d != nil {
				require.NoError(b, d.Close())
			}
			tput, _ := run.Profiling.Get("request_throughput")
			sum[i] += tput.Value
		}
		n++
	}
	b.ReportMetric(sum[0]/float64(n), "req/s-none")
	b.ReportMetric(sum[1]/float64(n), "req/s-dashboard")
	b.ReportMetric(sum[1]/sum[0], "ratio")
}

// TestDashboardEscapesLoggedLines: a log line printed above the dashboard
// (a warning quoting a server) reaches the terminal escaped.
func TestDashboardEscapesLoggedLines(t *testing.T) {
	var screen bytes.Buffer
	d := dashboard.Start(&screen, dashboard.Options{Title: "t", Program: []tea.ProgramOption{tea.WithWindowSize(120, 20)}})
	fmt.Fprintln(d.Log(), "warning: the server said \x1b]0;pwned\a\x1b[2J")
	require.NoError(t, d.Close())
	assert.Contains(t, screen.String(), `warning: the server said \x1b]0;pwned\x07\x1b[2J`)
	assert.NotContains(t, screen.String(), "\x1b]0;pwned", "the window title is not set")
	assert.NotContains(t, screen.String(), "\x1b[2J", "the screen is not cleared")
}
