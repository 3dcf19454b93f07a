package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestCtrlCDuringAnOpenMetricsScrape: a metrics server that answers
// OpenMetrics (though the text format is asked for) with long label
// values — 100 series of 4 KiB, 400 KiB — is scraped like any other: a
// second scrape comes (an endpoint's scrapes take turns, so the first,
// parse included, is over), and a Ctrl-C then, while another may be
// parsing, ends the run (exit 130). expfmt's OpenMetrics parser took
// minutes a line of such a body (hours for the body): no second scrape
// came, and nothing, the scrape's timeout nor a Ctrl-C, ended the first.
// The limits only guard against a hang.
func TestCtrlCDuringAnOpenMetricsScrape(t *testing.T) {
	var b strings.Builder
	b.WriteString("# HELP g A gauge.\n# TYPE g gauge\n")
	label := strings.Repeat("x", 4096)
	for i := range 100 {
		fmt.Fprintf(&b, "g{a=\"%d\",b=\"%s\"} %d\n", i, label, i)
	}
	b.WriteString("# EOF\n")
	body := b.String()
	var scrapes atomic.Int32
	again := make(chan struct{})
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if scrapes.Add(1) == 2 {
			close(again)
		}
		w.Header().Set("Content-Type", "application/openmetrics-text; version=1.0.0; charset=utf-8")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(metrics.Close)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	cmd, stdout, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), quick(m.URL, "--concurrency", "1",
		"--benchmark-duration", "600", "--no-gpu-telemetry", "--server-metrics", metrics.URL+"/metrics", "--artifact-dir", "out")...)
	select {
	case <-again:
	case <-time.After(hangGuard):
		t.Fatalf("the metrics server was scraped %d time(s), not twice; stderr:\n%s", scrapes.Load(), stderr)
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	code := exitCode(t, cmd, hangGuard)
	require.Equal(t, ExitInterrupted, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr.String(), "SIGINT (Ctrl-C)")
}
