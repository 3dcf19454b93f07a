package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/store"
)

// exportedITLs are the inter_token_latency values (ms) of dir's
// profile_export.jsonl, by each record's request_start_ns.
func exportedITLs(t *testing.T, dir string) map[int64]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "out", "profile_export.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	out := map[int64]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Metadata struct {
				RequestStartNs int64 `json:"request_start_ns"`
			} `json:"metadata"`
			Metrics map[string]struct {
				Value json.RawMessage `json:"value"` // an array for some metrics
			} `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		var itl float64
		require.NoError(t, json.Unmarshal(line.Metrics[metrics.TagITL].Value, &itl), "every record has an ITL: %s", sc.Text())
		_, dup := out[line.Metadata.RequestStartNs]
		require.False(t, dup, "request_start_ns %d names one record", line.Metadata.RequestStartNs)
		out[line.Metadata.RequestStartNs] = itl
	}
	require.NoError(t, sc.Err())
	return out
}

// storedITLs are the inter_token_latency values (ms) of the profiling
// records of dir's one stored run, by request start, as `aiperf plot`
// loads and draws them (plot.Load, metrics.Times).
func storedITLs(t *testing.T, dir string) map[int64]float64 {
	t.Helper()
	db, err := store.OpenReadOnly(filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	defer db.Close()
	runs, err := db.ListRuns(context.Background(), store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	d, err := plot.Load(context.Background(), db, plot.Selection{Refs: []string{fmt.Sprint(runs[0].ID)}}, 0.95)
	require.NoError(t, err)
	run := d.Runs[runs[0].ID]
	require.NotNil(t, run)
	out := map[int64]float64{}
	for i := range run.Records {
		rec := &run.Records[i]
		if rec.PhaseKind != plan.KindProfiling || !rec.OK() {
			continue
		}
		tt := metrics.Times(rec, run.Config.Streams())
		require.True(t, tt.HasITL, "record %d", rec.Index)
		out[rec.WallStartNs] = tt.ITLNs / 1e6
	}
	return out
}

// TestPerChunkUsageStored: a --per-chunk-usage run read back from the
// store (as `aiperf plot` reads it) gives every record the ITL of the
// run's own export, (latency − TTFT) / (OSL − the first chunk's tokens),
// not / (OSL − 1): the store keeps each record's first content chunk
// count. So does a run of two worker processes (--workers), whose records
// carry the count to the coordinator. A run without the flag reads back
// as before, / (OSL − 1).
func TestPerChunkUsageStored(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 2, ITL: 1, FirstChunkTokens: firstChunk})
	for _, c := range []struct {
		name  string
		less  int
		flags []string
	}{
		{"per-chunk usage", firstChunk, []string{"--per-chunk-usage"}},
		{"workers", firstChunk, []string{"--per-chunk-usage", "--workers", "2", "--concurrency", "2",
			"--export-level", "records"}}, // the payloads stay in the workers,
		{"without the flag", 1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "workers" {
				subprocesses(t) // the worker processes run the built binary
			}
			dir := t.TempDir()
			chunkProfile(t, dir, m.URL, c.flags...)
			assertITLDivisor(t, dir, c.less)
			exported, stored := exportedITLs(t, dir), storedITLs(t, dir)
			require.Len(t, stored, len(exported))
			for start, want := range exported {
				got, ok := stored[start]
				require.True(t, ok, "the record that started at %d is stored", start)
				assert.InDelta(t, want, got, 1e-9*max(1, want), "record started at %d: stored ITL", start)
			}
		})
	}
}
