package htmlreport_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/htmlreport"
	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/plot/plottest"
	"github.com/aiperf-go/aiperf/store"
)

// bigSweep stores one sweep of 1,000 cells × 1 trial (20 requests each).
func bigSweep(b *testing.B) *store.DB {
	db, err := store.Open(filepath.Join(b.TempDir(), "aiperf.db"))
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	_, err = plottest.Save(context.Background(), db, plottest.Sweep{Name: "big", Cells: 1000, Trials: 1, TTFTMs: 20})
	require.NoError(b, err)
	return db
}

// BenchmarkReport1000Cells times `aiperf report` over a sweep of 1,000
// cells: loading it from the store, the figures and the HTML. It reports
// the file's size.
func BenchmarkReport1000Cells(b *testing.B) {
	db := bigSweep(b)
	var size int
	for b.Loop() {
		d, err := plot.Load(context.Background(), db, plot.Selection{Sweeps: []string{"big"}}, 0.95)
		require.NoError(b, err)
		var buf bytes.Buffer
		require.NoError(b, htmlreport.Write(&buf, d, htmlreport.Options{}))
		size = buf.Len()
	}
	b.ReportMetric(float64(size)/1e6, "MB/report")
}

// BenchmarkReport1000CellsInChromium times how long chromium takes to load
// and lay out that report (to its load event, then a full layout).
func BenchmarkReport1000CellsInChromium(b *testing.B) {
	db := bigSweep(b)
	d, err := plot.Load(context.Background(), db, plot.Selection{Sweeps: []string{"big"}}, 0.95)
	require.NoError(b, err)
	path := filepath.Join(b.TempDir(), "report.html")
	writeReport(b, d, path)
	ctx, _ := browse(b, path)
	var ms float64
	for b.Loop() {
		require.NoError(b, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitReady("body")))
		ms, err = chromedp.Run(ctx, chromedp.Evaluate[float64](
			`document.body.getBoundingClientRect().height, performance.getEntriesByType("navigation")[0].loadEventEnd`))
		require.NoError(b, err)
	}
	b.ReportMetric(ms, "ms-to-load-event")
}
