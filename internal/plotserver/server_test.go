package plotserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/plot/plottest"
)

// source reads the runs of a synthetic sweep's directory, counting reads.
func source(t *testing.T, reads *atomic.Int32) Source {
	root := t.TempDir()
	require.NoError(t, plottest.Export(root, plottest.Sweep{Name: "s", Cells: 2, Trials: 1, TTFTMs: 20, Seed: 1}))
	return func() ([]plot.Figure, []string, error) {
		reads.Add(1)
		d, err := plot.LoadDirs([]string{filepath.Join(root, "concurrency_1"), filepath.Join(root, "concurrency_2")})
		if err != nil {
			return nil, nil, err
		}
		figs, notes := d.Figures()
		return figs, notes, nil
	}
}

func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

func TestPage(t *testing.T) {
	var reads atomic.Int32
	ts := httptest.NewServer(New(source(t, &reads), plot.Light, 640, 400).Handler())
	defer ts.Close()

	code, typ, body := get(t, ts.URL+"/")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "text/html; charset=utf-8", typ)
	assert.Contains(t, body, `<img src="figure/ttft_vs_throughput.svg?theme=light"`)
	assert.Contains(t, body, `<img src="figure/cells/concurrency_1/cdf.svg?theme=light"`)
	assert.Contains(t, body, "no run has GPU telemetry", "the notes are shown")
	assert.Contains(t, body, `<a href="?theme=dark">dark theme</a>`)
	assert.EqualValues(t, 1, reads.Load())

	code, typ, body = get(t, ts.URL+"/figure/cells/concurrency_1/cdf.svg")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "image/svg+xml", typ)
	assert.True(t, strings.HasPrefix(body, "<?xml"))
	assert.Contains(t, body, `viewBox="0 0 480 300"`, "640×400 px")
	assert.EqualValues(t, 1, reads.Load(), "a figure of the page's load")
	_, _, dark := get(t, ts.URL+"/figure/ttft_vs_throughput.svg?theme=dark")
	assert.Contains(t, dark, "fill:#1A1A1A")

	code, _, _ = get(t, ts.URL+"/figure/nope.svg")
	assert.Equal(t, http.StatusNotFound, code)
	code, _, _ = get(t, ts.URL+"/figure/ttft_vs_throughput.png")
	assert.Equal(t, http.StatusNotFound, code)

	get(t, ts.URL+"/")
	assert.EqualValues(t, 2, reads.Load(), "a reload reads the runs again")
	_, _, body = get(t, ts.URL+"/?theme=dark")
	assert.Contains(t, body, `background: #1a1a1a`)
	assert.Contains(t, body, `<a href="?theme=light">light theme</a>`)

	failing := httptest.NewServer(New(func() ([]plot.Figure, []string, error) {
		return nil, nil, errors.New("read x: boom")
	}, plot.Light, 640, 400).Handler())
	defer failing.Close()
	code, _, body = get(t, failing.URL+"/")
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Contains(t, body, "read x: boom")
}

// TestServeStops: Serve says where it listens and returns once its context
// ends.
func TestServeStops(t *testing.T) {
	var reads atomic.Int32
	s := New(source(t, &reads), plot.Dark, 640, 400)
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, "127.0.0.1:0", func(u string) { urls <- u }) }()
	url := <-urls
	code, _, body := get(t, url)
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "?theme=dark")
	cancel()
	require.NoError(t, <-done)
	_, err := http.Get(url)
	assert.Error(t, err, "no longer listening")

	err = New(source(t, &reads), plot.Light, 640, 400).Serve(context.Background(), "127.0.0.1:-1", func(string) {})
	assert.ErrorContains(t, err, "dashboard: listen on 127.0.0.1:-1")
}
