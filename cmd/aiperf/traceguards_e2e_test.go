package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/ctxtest"
	"github.com/aiperf-go/aiperf/internal/mock"
)

// A Ctrl-C once the KV-cache simulation has started (its progress line is
// the marker) stops analyze-trace: exit 130, no report printed or written.
// Before, the simulation ignored it, ran to its end and wrote the report
// (exit 0).
func TestAnalyzeTraceInterruptedInTheSimulation(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", sliceHead(t, 50))
	t.Chdir(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &ctxtest.CancelOn{Marker: "simulating the KV cache over 50 requests", Cancel: cancel}
	code := run(ctx, []string{"analyze-trace", "trace.jsonl", "--kv-cache-tokens", "2000000", "--cache-block-size", "16",
		"--output-file", "out/analysis.json"}, &stdout, stderr)
	assert.Equal(t, ExitInterrupted, code, stderr.String())
	assert.Contains(t, stderr.String(), "the KV-cache simulation stopped at request 0 of 50: context canceled")
	assert.NotContains(t, stdout.String(), "Trace Analysis Report")
	assert.NoFileExists(t, filepath.Join(dir, "out", "analysis.json"))

	inv := cli(t, dir, "analyze-trace", "trace.jsonl", "--kv-cache-tokens", "2000000", "--cache-block-size", "16")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "trace.jsonl: simulating the KV cache over 50 requests (Ctrl-C stops it)")
	assert.Contains(t, inv.stdout, "KV cache:            2,000,000 tokens (125,000 blocks of 16 tokens)")
}

// analyze-trace and synthesize-trace refuse what profile refuses in the
// same file given with no other flag: a timestamped trace with a
// conversation that has none (profile's very message), and a Bailian
// trace, which they would misread as a mooncake one (naming the flag that
// reads it).
func TestTraceToolsCheckAsProfile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mixed.jsonl", `{"input_length": 8, "hash_ids": [1,2], "timestamp": 0}
{"input_length": 8, "hash_ids": [1,3], "delay": 50}
{"input_length": 8, "hash_ids": [1,4], "timestamp": 200}
{"input_length": 8, "hash_ids": [1,5]}
`)
	for _, args := range [][]string{{"analyze-trace", "mixed.jsonl", "--block-size", "4"},
		{"synthesize-trace", "mixed.jsonl", "out.jsonl", "--block-size", "4", "--max-isl", "6"}} {
		inv := cli(t, dir, args...)
		assert.Equal(t, ExitUsage, inv.code, args)
		for _, line := range []string{"2", "4"} {
			assert.Contains(t, inv.stderr, "mixed.jsonl:"+line+": timestamp: the first turn of this conversation has no timestamp: "+
				"a fixed schedule needs one on every conversation's first turn", args)
		}
		assert.NotContains(t, inv.stdout, "Trace Analysis Report")
	}
	assert.NoFileExists(t, filepath.Join(dir, "out.jsonl"))

	writeFile(t, dir, "bailian.jsonl", `{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0.0, "input_length": 20, "output_length": 2, "turn": 1, "hash_ids": [1,2]}
{"chat_id": 2, "parent_chat_id": 1, "timestamp": 0.1, "input_length": 20, "output_length": 2, "turn": 2, "hash_ids": [1,2]}
`)
	inv := cli(t, dir, "analyze-trace", "bailian.jsonl", "--block-size", "16")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "bailian.jsonl:1: chat_id: a bailian_trace record (chat_id, parent_chat_id, timestamps in seconds)")
	assert.Contains(t, inv.stderr, "aiperf profile --custom-dataset-type bailian_trace replays this file")
}

// An output file that cannot be written (a directory, a path under a
// file) is refused before the trace is read (exit 2, no report printed);
// before, the whole analysis ran first.
func TestTraceToolsCheckTheOutputFirst(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", sliceHead(t, 5))
	writeFile(t, dir, "plain", "x")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "out"), 0o755))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze-trace", "trace.jsonl", "--output-file", "out"}, "--output-file out is a directory: give a file path"},
		{[]string{"analyze-trace", "trace.jsonl", "--output-file", "plain/a.json"}, "--output-file plain/a.json: plain is not a directory"},
		{[]string{"synthesize-trace", "trace.jsonl", "out"}, "the output file out is a directory: give a file path"},
		{[]string{"synthesize-trace", "trace.jsonl", "--output-file", "out"}, "--output-file out is a directory: give a file path"},
	} {
		inv := cli(t, dir, c.args...)
		assert.Equal(t, ExitUsage, inv.code, c.args)
		assert.Contains(t, inv.stderr, c.want, c.args)
		assert.Empty(t, inv.stdout, "nothing analysed or synthesized: %v", c.args)
	}
	inv := cli(t, dir, "analyze-trace", "trace.jsonl", "--output-file", "new/dir/a.json")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.FileExists(t, filepath.Join(dir, "new", "dir", "a.json"), "a missing directory is still made")
}

// A speed-up ratio that would push a timestamp past what a trace may hold
// is refused, in synthesize-trace and in profile's synthesis, naming the
// flag and the input's line (not profile's temporary copy); before,
// 100 / 1e-20 wrapped to -9223372036854775808 and was written (exit 0).
// The banner shows the ratio as given.
func TestSpeedupRatioOverflow(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ovf.jsonl", `{"input_length": 8, "hash_ids": [1,2], "timestamp": 0}
{"input_length": 8, "hash_ids": [1,3], "timestamp": 100}
`)
	inv := cli(t, dir, "synthesize-trace", "ovf.jsonl", "out.jsonl", "--block-size", "4", "--speedup-ratio", "1e-20")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stdout, "Speedup ratio:             1e-20\n")
	assert.Contains(t, inv.stderr, "ovf.jsonl:2: timestamp: timestamp 100 divided by --speedup-ratio 1e-20 is 1e+22 ms, "+
		"past the 9007199254740992 ms a trace timestamp may be: raise --speedup-ratio to at least 1.12e-14")
	assert.NoFileExists(t, filepath.Join(dir, "out.jsonl"))
	inv = cli(t, dir, "synthesize-trace", "ovf.jsonl", "out.jsonl", "--block-size", "4", "--speedup-ratio", "2.5")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "Speedup ratio:             2.50\n", "AIPerf's two decimals when they say it")

	m := startMock(t, mock.Config{Fast: true})
	inv = cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--input-file", "ovf.jsonl", "--ui", "none",
		"--synthesis-block-size", "4", "--synthesis-speedup-ratio", "1e-20")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "ovf.jsonl:2: timestamp: timestamp 100 divided by --synthesis-speedup-ratio 1e-20 is 1e+22 ms")
	assert.NotContains(t, inv.stderr, "aiperf-synthesis-", "the input file's line, not the temporary copy's")
	assert.Zero(t, m.control().InferenceRequests)
}

// The year a replay may last is checked after --replay-speedup: a
// slow-down that would schedule a request years out is refused before any
// traffic, naming the flag; before, the run waited for it.
func TestReplaySpeedupYearGuard(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "yr2.jsonl", `{"input_length": 8, "hash_ids": [1,2], "timestamp": 0}
{"input_length": 8, "hash_ids": [1,3], "timestamp": 100}
`)
	m := startMock(t, mock.Config{Fast: true})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard) // a run that waits fails, rather than hangs
	defer cancel()
	inv := cliCtx(ctx, t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--ui", "none", "--custom-dataset-type", "mooncake_trace",
		"--input-file", "yr2.jsonl", "--isl-block-size", "4", "--replay-speedup", "1e-9")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "yr2.jsonl:2: timestamp: timestamp 100 is 100ms after the schedule's zero")
	assert.Contains(t, inv.stderr, "--replay-speedup 1e-09 makes that 3 years of replay: beyond the year a replay may last: raise --replay-speedup to at least 3.18e-09")
	assert.Zero(t, m.control().InferenceRequests, "nothing sent")
}

// inputs.json is built by reading the input file back at the end of the
// run: when the file changed meanwhile (here: output_length 2 made 7 the
// moment the mock receives the request, so the body sent had 2), it is not
// written, with a warning that says why, rather than recording a body
// that was never sent. Before, it said max_tokens 7 (or, for a truncated
// file, "warning: write inputs.json: ... EOF").
func TestInputsJSONNotWrittenFromAChangedInput(t *testing.T) {
	dir := t.TempDir()
	trace := writeFile(t, dir, "trace.jsonl", `{"text_input": "hello", "output_length": 2}`+"\n")
	var once sync.Once
	m := startMockBehind(t, mock.Config{Fast: true}, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/completions") {
				once.Do(func() {
					require.NoError(t, os.WriteFile(trace, []byte(`{"text_input": "hello", "output_length": 7}`+"\n"), 0o644))
				})
			}
			h.ServeHTTP(w, r)
		})
	})
	inv := cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--ui", "none", "--custom-dataset-type", "mooncake_trace",
		"--input-file", "trace.jsonl", "--artifact-dir", "out")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 1, m.control().InferenceRequests)
	assert.Contains(t, inv.stdout, "Warning: inputs.json not written: it would not show what was sent: write inputs.json: "+
		"conversation 0: re-read trace.jsonl: the input file changed during the run: ")
	assert.NoFileExists(t, filepath.Join(dir, "out", "inputs.json"))
	assert.NoFileExists(t, filepath.Join(dir, "out", "inputs.json.tmp"))
}

// The simulation's flags are checked with their names: a cache of 0 tokens
// is refused (it meant "no simulation", silently), and a TTFT past a day
// too (1e308 was refused as "not finite").
func TestAnalyzeTraceSimulationFlags(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", sliceHead(t, 2))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kv-cache-tokens", "0"}, "--kv-cache-tokens must be at least one cache block, 512 tokens (--cache-block-size, default --block-size), got 0: leave it out to skip the simulation"},
		{[]string{"--kv-cache-tokens", "4096", "--ttft-ms", "1e308"}, "--ttft-ms must be from 0 to 86400000 ms (a day), got 1e+308"},
		{[]string{"--kv-cache-tokens", "4096", "--itl-ms", "-1"}, "--itl-ms must be from 0 to 86400000 ms (a day), got -1"},
	} {
		inv := cli(t, dir, append([]string{"analyze-trace", "trace.jsonl"}, c.args...)...)
		assert.Equal(t, ExitUsage, inv.code, c.args)
		assert.Contains(t, inv.stderr, c.want, c.args)
	}
	inv := cli(t, dir, "analyze-trace", "trace.jsonl", "--kv-cache-tokens", "512")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "KV cache:            512 tokens (1 block of 512 tokens)")
}

// profile's --synthesis-* rewrite and its replay read the hash ids at one
// block size: --synthesis-block-size 4 rewrote a trace of 4-token blocks
// that the replay then refused at 512 (naming the temporary copy's line 1);
// both block sizes given differently are refused; a problem the replay
// finds in the rewritten trace is placed at the input file's line.
func TestSynthesisReplaysAtItsBlockSize(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "s.jsonl", `{"timestamp":0,"input_length":8,"hash_ids":[1,2],"output_length":2}
{"timestamp":500,"input_length":12,"hash_ids":[1,2,3],"output_length":2}
{"timestamp":1000,"input_length":8,"hash_ids":[1,4],"output_length":2}
{"timestamp":1500,"input_length":4,"hash_ids":[5],"output_length":2}
`)
	m := startMock(t, mock.Config{Fast: true})
	profile := func(args ...string) invocation {
		return cli(t, dir, append([]string{"profile", "-m", "mock-model", "--url", m.URL, "--ui", "none", "--replay-speedup", "100"}, args...)...)
	}
	inv := profile("--input-file", "s.jsonl", "--synthesis-block-size", "4", "--synthesis-prefix-len-multiplier", "2")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 4, m.control().InferenceRequests)

	inv = profile("--input-file", "s.jsonl", "--synthesis-block-size", "4", "--prompt-input-tokens-block-size", "8", "--synthesis-speedup-ratio", "2")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--synthesis-block-size 4 and --prompt-input-tokens-block-size 8 differ")

	writeFile(t, dir, "nt.jsonl", `{"timestamp":0,"input_length":8,"hash_ids":[1,2],"output_length":2}

{"input_length":8,"hash_ids":[1,3],"output_length":2}
`)
	inv = profile("--input-file", "nt.jsonl", "--synthesis-block-size", "4", "--synthesis-speedup-ratio", "2")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "nt.jsonl:3: timestamp: the first turn of this conversation has no timestamp")
	assert.Contains(t, inv.stderr, "(in the trace as the --synthesis-* flags rewrote it)")
	assert.NotContains(t, inv.stderr, "aiperf-synthesis-", "the input file's line, not the temporary copy's")
	assert.Equal(t, 4, m.control().InferenceRequests)
}
