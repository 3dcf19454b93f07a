package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
)

// TestWorkersSplitARateByTheCap: a constant rate under an in-flight cap,
// each slot's sends (cap/rate = 2.8 s apart) far slower than a reply
// (1.7 s), skips no send from one process, and none from 4 workers either.
// The cap 7 is split 2, 2, 2, 1: were the rate split evenly, the worker
// with one slot would get a send every 1.6 s, find its slot still busy
// and drop it while the others had slots free.
func TestWorkersSplitARateByTheCap(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	for _, workers := range []string{"1", "4"} {
		t.Run("workers "+workers, func(t *testing.T) {
			m := startMock(t, mock.Config{TTFT: 1700, ITL: 1})
			dir := t.TempDir()
			resultFile := filepath.Join(dir, "result.json")
			inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--streaming", "--ui", "none", "--no-store",
				"--tokenizer", tok, "--isl", "10", "--osl", "2", "--num-dataset-entries", "4",
				"--request-rate", "2.5", "--request-rate-mode", "constant", "--concurrency", "7",
				"--benchmark-duration", "3.9", "--workers", workers, "--result-file", resultFile)
			require.Equal(t, 0, inv.code, inv.stderr)
			b, err := os.ReadFile(resultFile)
			require.NoError(t, err)
			var run result.Run
			require.NoError(t, json.Unmarshal(b, &run))
			assert.Zero(t, run.Audit.CapSkipped, "no slot is ever busy when its next send comes due")
			assert.Positive(t, m.control().InferenceRequests)
		})
	}
}
