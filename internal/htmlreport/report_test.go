package htmlreport_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/htmlreport"
	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/plot/plottest"
	"github.com/aiperf-go/aiperf/store"
)

// twoSweeps stores a fast and a slow synthetic sweep.
func twoSweeps(t testing.TB, cells, trials int) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "aiperf.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	for i, s := range []plottest.Sweep{{Name: "fast", TTFTMs: 20}, {Name: "slow", TTFTMs: 60}} {
		s.Cells, s.Trials, s.Seed = cells, trials, uint64(i)
		_, err := plottest.Save(ctx, db, s)
		require.NoError(t, err)
	}
	return db
}

func load(t testing.TB, db *store.DB, sweeps ...string) *plot.Data {
	t.Helper()
	d, err := plot.Load(context.Background(), db, plot.Selection{Sweeps: sweeps}, 0.95)
	require.NoError(t, err)
	return d
}

// writeReport writes d's report to path, with the searches' sections.
func writeReport(t testing.TB, d *plot.Data, path string, searches ...htmlreport.Search) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, htmlreport.Write(&buf, d, htmlreport.Options{Store: "aiperf.db", Version: "test",
		Generated: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Searches: searches}))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return buf.Bytes()
}

func TestReportContent(t *testing.T) {
	db := twoSweeps(t, 3, 2)
	html := string(writeReport(t, load(t, db, "fast", "slow"), filepath.Join(t.TempDir(), "r.html")))
	for _, want := range []string{
		`<title>aiperf report: sweeps fast, slow</title>`,
		`Sweep &#34;fast&#34; (id 1, complete), 95% confidence`, // the sweep tables
		`Sweep slow (id 2) against fast (id 1, baseline)`,       // the verdicts
		`class="worse"`,                         // slower TTFT
		`id="fig-ttft_vs_throughput"`,           // the Pareto view
		`id="fig-cells/concurrency_1/cdf"`,      // a cell's CDFs
		`<summary>concurrency_1</summary>`,      // cells by label
		`reset_kv_cache`, `/reset_prefix_cache`, // hook calls
		`verified: no prompt was served from the prefix cache`, // reset verification
		`Content-Security-Policy`,
	} {
		assert.True(t, strings.Contains(html, want), "the report has %s", want)
	}
	// Self-contained: no URL but the SVG namespaces.
	urls := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s"'<>]*`).FindAllString(html, -1)
	for _, u := range urls {
		assert.Contains(t, []string{"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, u)
	}
	assert.NotContains(t, html, "<?xml", "SVG prologs are stripped")
	assert.NotContains(t, html, `id="searches"`, "no search: no search section")
	assert.NotContains(t, html, `href="#searches"`)
	assert.NotContains(t, strings.ToLower(html), "<link")
	assert.NotContains(t, strings.ToLower(html), " src=")
}

func TestReportOfRuns(t *testing.T) {
	db := twoSweeps(t, 2, 2)
	d, err := plot.Load(context.Background(), db, plot.Selection{Refs: []string{"fast/concurrency_1", "slow/concurrency_1"}}, 0.95)
	require.NoError(t, err)
	html := string(writeReport(t, d, filepath.Join(t.TempDir(), "r.html")))
	assert.Contains(t, html, "Compared against fast/concurrency_1 (baseline)")
	assert.Contains(t, html, `id="fig-cdf"`)
	assert.Contains(t, html, "No sweep: the report compares runs.")
}
