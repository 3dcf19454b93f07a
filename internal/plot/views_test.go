package plot_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/plot/plottest"
	"github.com/aiperf-go/aiperf/store"
)

// twoSweeps stores a fast and a slow sweep of 4 cells × 3 trials.
func twoSweeps(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "aiperf.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	_, err = plottest.Save(ctx, db, plottest.Sweep{Name: "fast", Cells: 4, Trials: 3, TTFTMs: 20, Seed: 1})
	require.NoError(t, err)
	_, err = plottest.Save(ctx, db, plottest.Sweep{Name: "slow", Cells: 4, Trials: 3, TTFTMs: 60, Seed: 2})
	require.NoError(t, err)
	return db
}

func figure(t *testing.T, figs []plot.Figure, name string) plot.Figure {
	t.Helper()
	for _, f := range figs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no figure %s", name)
	return plot.Figure{}
}

func TestSweepViews(t *testing.T) {
	db := twoSweeps(t)
	d, err := plot.Load(context.Background(), db, plot.Selection{Sweeps: []string{"fast", "slow"}}, 0.95)
	require.NoError(t, err)
	figs, notes := d.Figures()
	assert.Empty(t, notes)

	sc := figure(t, figs, "ttft_vs_throughput").Data.(*plot.Scatter)
	assert.Equal(t, "time_to_first_token.p99", sc.X.Key.String())
	assert.Equal(t, "request_throughput.avg", sc.Y.Key.String())
	require.Len(t, sc.Series, 2)
	assert.Equal(t, []string{"fast", "slow"}, []string{sc.Series[0].Name, sc.Series[1].Name})
	for _, s := range sc.Series {
		require.Len(t, s.Points, 4, "a point per cell")
		for _, p := range s.Points {
			assert.Equal(t, 3, p.Trials)
			assert.True(t, p.X.HasCI() && p.Y.HasCI(), "whiskers over 3 trials")
			assert.Less(t, p.X.Low, p.X.Mean)
			assert.Greater(t, p.X.High, p.X.Mean)
		}
		require.NotEmpty(t, s.Frontier)
	}
	// The slower server's frontier lies to the right of the faster's.
	fastMax, slowMin := 0.0, 1e9
	for _, p := range sc.Series[0].Frontier {
		fastMax = max(fastMax, p.X.High)
	}
	for _, p := range sc.Series[1].Frontier {
		slowMin = min(slowMin, p.X.Low)
	}
	assert.Greater(t, slowMin, fastMax+20, "TTFT p99 ~72 ms against ~24 ms")
	// Cell labels are short in figures.
	assert.Equal(t, "c=1", sc.Series[0].Points[0].Label)

	bars := figure(t, figs, "bars_time_to_first_token_p99").Data.(*plot.Bars)
	assert.Len(t, bars.Categories, 4)
	require.Len(t, bars.Series, 2)
	for i := range bars.Categories {
		assert.Greater(t, bars.Series[1].Values[i].Mean, bars.Series[0].Values[i].Mean*2)
		assert.True(t, bars.Series[0].Values[i].HasCI())
	}

	cdf := figure(t, figs, "cells/concurrency_1/cdf").Data.(*plot.CDF)
	require.Len(t, cdf.Panels, 2)
	require.Len(t, cdf.Panels[0].Lines, 2, "the sweeps overlaid per cell")
	assert.Len(t, cdf.Panels[0].Lines[0].X, 60, "3 trials × 20 requests")
	assert.Equal(t, 1.0, cdf.Panels[0].Lines[0].P[59])

	tl := figure(t, figs, "cells/concurrency_1/timeline_slow").Data.(*plot.Timeline)
	assert.Len(t, tl.Requests, 20)
	assert.Len(t, tl.Events, 3)
	assert.Equal(t, "reset_kv_cache", tl.Events[0].Hook)
	assert.Less(t, tl.Events[0].T, 0.0, "the reset precedes the load")
}

func TestGroupViews(t *testing.T) {
	db := twoSweeps(t)
	d, err := plot.Load(context.Background(), db, plot.Selection{Refs: []string{"fast/concurrency_2", "slow/concurrency_2", "1"}}, 0.95)
	require.NoError(t, err)
	figs, _ := d.Figures()
	sc := figure(t, figs, "ttft_vs_throughput").Data.(*plot.Scatter)
	require.Len(t, sc.Series, 1)
	assert.Len(t, sc.Series[0].Points, 3, "a point per group")
	cdf := figure(t, figs, "cdf").Data.(*plot.CDF)
	assert.Len(t, cdf.Panels[1].Lines, 3, "a line per group")
	figure(t, figs, "runs/1/timeline")
}

func TestSelectionErrors(t *testing.T) {
	db := twoSweeps(t)
	ctx := context.Background()
	_, err := plot.Load(ctx, db, plot.Selection{}, 0.95)
	assert.ErrorContains(t, err, "nothing to draw")
	_, err = plot.Load(ctx, db, plot.Selection{Sweeps: []string{"a"}, Refs: []string{"1"}}, 0.95)
	assert.ErrorContains(t, err, "not both")
	_, err = plot.Load(ctx, db, plot.Selection{Sweeps: []string{"nope"}}, 0.95)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = plot.Load(ctx, db, plot.Selection{Refs: []string{"fast"}}, 0.95)
	assert.ErrorIs(t, err, store.ErrAmbiguous)
}

func TestEncode(t *testing.T) {
	db := twoSweeps(t)
	d, err := plot.Load(context.Background(), db, plot.Selection{Sweeps: []string{"fast", "slow"}}, 0.95)
	require.NoError(t, err)
	all, _ := d.Figures()
	// One figure of each kind: rendering is slow under the race detector.
	var figs []plot.Figure
	kinds := map[string]bool{}
	for _, f := range all {
		if k := fmt.Sprintf("%T", f.Data); !kinds[k] {
			kinds[k] = true
			figs = append(figs, f)
		}
	}
	require.Len(t, figs, 4)
	for _, f := range figs {
		var buf bytes.Buffer
		require.NoError(t, f.Encode(&buf, "png", 900, 500), f.Name)
		img, err := png.Decode(&buf)
		require.NoError(t, err, f.Name)
		assert.Equal(t, 900, img.Bounds().Dx(), f.Name)
		assert.Equal(t, 500, img.Bounds().Dy(), f.Name)
		// Not blank: some pixels are neither white nor one flat colour.
		colours := map[[3]uint32]bool{}
		for y := 0; y < 500; y += 5 {
			for x := 0; x < 900; x += 5 {
				r, g, b, _ := img.At(x, y).RGBA()
				colours[[3]uint32{r, g, b}] = true
			}
		}
		assert.Greater(t, len(colours), 3, "%s is drawn", f.Name)

		buf.Reset()
		require.NoError(t, f.Encode(&buf, "svg", 900, 500), f.Name)
		svg := buf.String()
		dec := xml.NewDecoder(strings.NewReader(svg))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, "%s is well-formed XML", f.Name)
		}
		assert.Contains(t, svg, `viewBox="0 0 675 375"`, "900×500 px at 96 dpi is 675×375 pt")
		assert.NotContains(t, svg, "href", "no external reference")
	}
	assert.ErrorContains(t, figs[0].Encode(io.Discard, "gif", 100, 100), `unknown figure format "gif"`)
	assert.ErrorContains(t, figs[0].Encode(io.Discard, "png", 10, 100), "64 to 16384")
}
