package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestCapSkipsCountInTheScheduleRate: a constant 20 req/s under a cap of
// 2 against a server slower than the run sends 2 requests in the first
// 50 ms and skips the rest of the schedule. The schedule's rate counts
// the skipped sends (about 20 req/s, not the 2 sends' own), and the send
// rate is taken over the schedule's span: 2 sends in 2 s, not 20 req/s
// "100% of the schedule" over the 50 ms they filled.
func TestCapSkipsCountInTheScheduleRate(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{TTFT: 4000, ITL: 1})
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "result.json")
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--streaming", "--ui", "simple", "--no-store",
		"--tokenizer", tinyTokenizer(t), "--isl", "10", "--osl", "2", "--num-dataset-entries", "4",
		"--request-rate", "20", "--request-rate-mode", "constant", "--concurrency", "2",
		"--benchmark-duration", "2", "--benchmark-grace-period", "0", "--result-file", resultFile)
	b, err := os.ReadFile(resultFile)
	require.NoError(t, err, inv.stderr)
	var run result.Run
	require.NoError(t, json.Unmarshal(b, &run))
	a := run.Audit
	require.Positive(t, a.CapSkipped, inv.stdout)
	assert.InDelta(t, 20, a.ScheduledRate, 5, "the schedule drawn: its skipped sends count")
	assert.Less(t, a.AchievedRate, a.ScheduledRate/4, "2 sends over the schedule's span")
	assert.Contains(t, inv.stdout, "over the schedule's span, its skipped sends included")
	assert.Contains(t, strings.Join(a.Warnings, "\n"), fmt.Sprintf("%d of the schedule's %d sends were skipped",
		a.CapSkipped, a.CapSkipped+2))
}
