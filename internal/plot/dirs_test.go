package plot

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plot/plottest"
)

func names(figs []Figure) []string {
	var out []string
	for _, f := range figs {
		out = append(out, f.Name)
	}
	return out
}

func byName(t *testing.T, figs []Figure, name string) Figure {
	t.Helper()
	for _, f := range figs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no figure %s among %v", name, names(figs))
	return Figure{}
}

// TestDirsMultiRun: two sweeps' artifact directories (3 cells × 2 trials,
// `aiperf sweep`'s layout) overlaid: AIPerf's comparison (without GPU
// telemetry, only ttft_vs_throughput), our views with whiskers from the
// cells' aggregates, and per cell the CDFs of both sweeps' trials.
func TestDirsMultiRun(t *testing.T) {
	root := t.TempDir()
	fast, slow := filepath.Join(root, "fast"), filepath.Join(root, "slow")
	require.NoError(t, plottest.Export(fast, plottest.Sweep{Name: "fast", Cells: 3, Trials: 2, TTFTMs: 20, Seed: 1}))
	require.NoError(t, plottest.Export(slow, plottest.Sweep{Name: "slow", Cells: 3, Trials: 2, TTFTMs: 60, Seed: 2}))
	d, err := LoadDirs([]string{fast, slow})
	require.NoError(t, err)
	assert.False(t, d.Single())
	assert.Equal(t, []string{"fast", "slow"}, d.Series)
	assert.Equal(t, []string{"concurrency_1", "concurrency_2", "concurrency_3"}, d.Labels[0])
	figs, notes := d.Figures()
	assert.Contains(t, notes, "pareto_curve_throughput_per_gpu_vs_latency: no run has GPU telemetry (aiperf profile --gpu-telemetry), so no throughput per GPU")

	sc := byName(t, figs, "ttft_vs_throughput").Data.(*Scatter)
	assert.Equal(t, "time_to_first_token.avg", sc.X.Key.String(), "AIPerf's view: the averages")
	require.Len(t, sc.Series, 1, "a series per model")
	assert.Equal(t, "mock-model", sc.Series[0].Name)
	require.Len(t, sc.Series[0].Points, 6, "every cell of both paths")
	assert.Equal(t, "1", sc.Series[0].Points[0].Label, "labelled by concurrency")
	assert.Equal(t, 2, sc.Series[0].Points[0].Trials)
	assert.True(t, sc.Series[0].Points[0].X.HasCI(), "the aggregate's interval")

	ours := byName(t, figs, "ttft_p99_vs_throughput").Data.(*Scatter)
	assert.Equal(t, "time_to_first_token.p99", ours.X.Key.String())
	require.Len(t, ours.Series, 2, "a series per path")
	assert.Equal(t, "slow", ours.Series[1].Name)
	assert.Greater(t, ours.Series[1].Points[0].X.Mean, ours.Series[0].Points[0].X.Mean+40, "TTFT p99 ~74 ms against ~25 ms")
	byName(t, figs, "pareto_curve_throughput_vs_interactivity")
	bars := byName(t, figs, "bars_time_to_first_token_p99").Data.(*Bars)
	assert.Equal(t, []string{"concurrency_1", "concurrency_2", "concurrency_3"}, bars.Categories)

	cdf := byName(t, figs, "cells/concurrency_2/cdf").Data.(*CDF)
	require.Len(t, cdf.Panels[0].Lines, 2, "the paths overlaid")
	assert.Len(t, cdf.Panels[0].Lines[0].X, 40, "2 trials × 20 requests")
	tl := byName(t, figs, "cells/concurrency_2/timeline_slow").Data.(*Timeline)
	assert.Len(t, tl.Requests, 20, "the first trial's")
	require.Len(t, tl.Events, 3, "its hook calls")
	assert.Less(t, tl.Events[0].T, 0.0, "the reset precedes the first send")
}

// TestDirsSingleRun: one run's directory gives AIPerf's figures over time
// and ours, from the exports our own writer makes.
func TestDirsSingleRun(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, plottest.Export(root, plottest.Sweep{Name: "one", Cells: 1, Trials: 1, TTFTMs: 30, Seed: 3}))
	dir := filepath.Join(root, "concurrency_1")
	writeFile(t, filepath.Join(dir, "profile_export_aiperf_timeslices.csv"),
		"Timeslice,Metric,Unit,Stat,Value\n0,Time to First Token,ms,avg,30.00\n1,Time to First Token,ms,avg,31.00\n")
	var gpu bytes.Buffer
	for i := range 4 {
		fmt.Fprintf(&gpu, `{"gpu_index":0,"gpu_uuid":"GPU-0","timestamp_ns":%d,"telemetry_data":{"nvidia_gpu_utilization":%d}}`+"\n",
			1_800_000_000_000_000_000+int64(i)*100_000_000, 20*i)
	}
	writeFile(t, filepath.Join(dir, "gpu_telemetry_export.jsonl"), gpu.String())

	d, err := LoadDirs([]string{dir})
	require.NoError(t, err)
	assert.True(t, d.Single())
	figs, notes := d.Figures()
	assert.Empty(t, notes)
	assert.Equal(t, []string{"ttft_over_time", "itl_over_time", "latency_over_time", "dispersed_throughput_over_time",
		"timeslices_ttft", "gpu_utilization_and_throughput_over_time", "ttft_timeline", "cdf", "timeline"}, names(figs))
	ttft := byName(t, figs, "ttft_over_time").Data.(*OverTime)
	require.Len(t, ttft.Points, 20)
	assert.InDelta(t, 30.6, ttft.Points[0].Y, 1.5, "the TTFT the JSONL holds")
	disp := byName(t, figs, "dispersed_throughput_over_time").Data.(*OverTime)
	peak := 0.0
	for _, p := range disp.Lines[0].Points {
		peak = max(peak, p.Y)
	}
	// Each request makes 16 tokens from its first token to its end, 75.1
	// ms; sent 20 ms apart, four generate at once at the peak.
	assert.InDelta(t, 4*16/0.0751, peak, 0.01)
	g := byName(t, figs, "gpu_utilization_and_throughput_over_time").Data.(*OverTime)
	assert.Len(t, g.Lower.Lines[0].Points, 4)
	tl := byName(t, figs, "timeline").Data.(*Timeline)
	assert.Len(t, tl.Requests, 20)
}

// TestEncodeDirFigures: each new kind of figure encodes as a PNG of the
// size asked, in both themes; dark has a dark background and light text.
func TestEncodeDirFigures(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, plottest.Export(root, plottest.Sweep{Name: "one", Cells: 1, Trials: 1, TTFTMs: 30, Seed: 3}))
	dir := filepath.Join(root, "concurrency_1")
	writeFile(t, filepath.Join(dir, "profile_export_aiperf_timeslices.csv"), "Timeslice,Metric,Unit,Stat,Value\n0,Request Latency,ms,avg,30.00\n")
	writeFile(t, filepath.Join(dir, "gpu_telemetry_export.jsonl"),
		`{"gpu_index":0,"timestamp_ns":1800000000100000000,"telemetry_data":{"nvidia_gpu_utilization":50}}`+"\n")
	d, err := LoadDirs([]string{dir})
	require.NoError(t, err)
	figs, _ := d.Figures()
	for _, name := range []string{"latency_over_time", "ttft_timeline", "timeslices_latency", "gpu_utilization_and_throughput_over_time"} {
		for _, theme := range Themes {
			f := byName(t, figs, name)
			f.Theme = theme
			var buf bytes.Buffer
			require.NoError(t, f.Encode(&buf, "png", 640, 400), name)
			img, err := png.Decode(&buf)
			require.NoError(t, err, name)
			assert.Equal(t, [2]int{640, 400}, [2]int{img.Bounds().Dx(), img.Bounds().Dy()})
			r, g, b, _ := img.At(1, 1).RGBA()
			corner := (r + g + b) >> 8 / 3
			light := 0
			for y := 0; y < 400; y += 2 {
				for x := 0; x < 640; x += 2 {
					if r, g, b, _ := img.At(x, y).RGBA(); (r+g+b)>>8/3 > 0xc0 {
						light++
					}
				}
			}
			if theme == Dark {
				assert.Equal(t, uint32(0x1a), corner, "%s: the dark background", name)
				assert.Positive(t, light, "%s: light text on it", name)
			} else {
				assert.Equal(t, uint32(0xff), corner, "%s: white", name)
			}
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}
