package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
)

// TestWorkersLeaveTheCellsChecksToTheCoordinator: under --workers the
// prefix cache's check at the start (and the KV reset's verification) is
// the coordinator's, over the merged records; a worker makes none on its
// part. One prompt sent by two workers at once to a fresh mock that
// generates one request at a time: the request it takes second hits the
// cache its twin just filled, so that worker's first request of the
// prompt was a hit, which its own records alone would take for a cache
// warm before the run. The merged records show the twins in flight at
// once, so neither says anything of the cache before the run.
func TestWorkersLeaveTheCellsChecksToTheCoordinator(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	for _, extra := range [][]string{nil, {"--reset-kv-cache"}} {
		t.Run(strings.Join(append([]string{"plain"}, extra...), " "), func(t *testing.T) {
			m := startMock(t, mock.Config{TTFT: 5, ITL: 1, MaxNumSeqs: 1})
			dir := t.TempDir()
			resultFile := filepath.Join(dir, "result.json")
			args := []string{"profile", "-m", "mock-model", "-u", m.URL, "--streaming", "--ui", "none", "--tokenizer", tok,
				"--isl", "100", "--osl", "4", "--num-dataset-entries", "1", "--concurrency", "2", "--request-count", "4",
				"--workers", "2", "--artifact-dir", filepath.Join(dir, "out"), "--no-store", "--result-file", resultFile}
			inv := cli(t, dir, append(args, extra...)...)
			require.Equal(t, 0, inv.code, inv.stderr)
			assert.Positive(t, m.control().CacheHits, "a worker's first request of the prompt hit the cache its twin filled")

			b, err := os.ReadFile(resultFile)
			require.NoError(t, err)
			var run result.Run
			require.NoError(t, json.Unmarshal(b, &run))
			require.Len(t, run.Audit.Workers, 2)
			warnings := run.Audit.Warnings
			for _, w := range run.Audit.Workers {
				warnings = append(warnings, w.Warnings...)
			}
			for _, w := range warnings {
				assert.NotContains(t, w, result.WarnCacheWarm)
			}
			assert.NotContains(t, inv.stdout+inv.stderr, result.WarnCacheWarm)
		})
	}
}
