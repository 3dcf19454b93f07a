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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestRequireStreamCompletionRefusedBeforeTraffic: --require-stream-completion
// checks streamed chat replies, so without --streaming, on another endpoint
// type or beside --extra-inputs stream:false it is a usage error (exit 2),
// naming the flag and the fix, before any request is sent.
func TestRequireStreamCompletionRefusedBeforeTraffic(t *testing.T) {
	m := startMock(t, mock.Config{})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"profile", "-m", "mock-model", "-u", m.URL, "--ui", "none", "--require-stream-completion"},
			"--require-stream-completion checks streamed replies only: add --streaming, or remove it"},
		{quick(m.URL, "--endpoint-type", "completions", "--require-stream-completion"),
			"--require-stream-completion checks streamed chat replies only, not --endpoint-type completions: use --endpoint-type chat --streaming, or remove it"},
		{quick(m.URL, "--extra-inputs", "stream:false", "--require-stream-completion"),
			"--require-stream-completion has nothing to check: --extra-inputs stream:false asks every request not to stream; remove one of them"},
	} {
		inv := cli(t, "", tc.args...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", tc.args, inv.stderr)
		assert.Contains(t, inv.stderr, tc.want)
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

// TestRequireStreamCompletionFailsWhatIsSkippedWithoutIt: a server whose
// streams carry a line that is not a chat chunk beside their text is a
// success without the flag (the line counted and skipped) and a failed
// request under it; the mock's well-formed streams pass it.
func TestRequireStreamCompletionFailsWhatIsSkippedWithoutIt(t *testing.T) {
	const tok = `data: {"choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}]}` + "\n\n"
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hits.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range []string{fmt.Sprintf(tok, "A"), "data: {oops\n\n", fmt.Sprintf(tok, "B"),
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n",
			`data: {"choices":[],"usage":{"prompt_tokens":16,"completion_tokens":2,"total_tokens":18}}` + "\n\n", "data: [DONE]\n\n"} {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			dir := t.TempDir()
			args := quick(srv.URL, "--request-count", "4", "--artifact-dir", "out", "--no-store")
			if strict {
				args = append(args, "--require-stream-completion")
			}
			inv := cli(t, dir, args...)
			export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
			if !strict {
				require.Equal(t, ExitOK, inv.code, inv.stderr)
				assert.Equal(t, 4.0, metricAvg(t, export, "request_count"))
				return
			}
			assert.Equal(t, ExitFailure, inv.code)
			assert.Contains(t, inv.stderr, "every profiling request failed: 4 of 4")
			assert.Equal(t, 4.0, metricAvg(t, export, "error_request_count"))
			jsonl, err := os.ReadFile(filepath.Join(dir, "out", "profile_export.jsonl"))
			require.NoError(t, err)
			assert.Equal(t, 4, strings.Count(string(jsonl),
				`a data: event is not a chat completion chunk (--require-stream-completion fails the request on one): \"{oops\"`))
		})
	}
	assert.Positive(t, hits.Load())

	m := startMock(t, mock.Config{})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "4", "--artifact-dir", "out", "--no-store", "--require-stream-completion")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 4.0, metricAvg(t, readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json")), "request_count"))
}
