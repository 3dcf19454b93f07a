package tracesynth

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/traceanalysis"
)

func write(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return path
}

func synth(t *testing.T, in string, p Params) []string {
	t.Helper()
	var out bytes.Buffer
	_, err := Synthesize(context.Background(), in, &out, p)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// The example of Dynamo's data generator README, with 4-token blocks: the
// shared blocks 0, 1, 2 keep their places, stretched twofold; the unique
// prompts get fresh ids; a request all in shared blocks keeps its last
// block's fill.
func TestPrefixLenMultiplier(t *testing.T) {
	in := write(t,
		`{"timestamp": 0, "input_length": 15, "output_length": 1, "hash_ids": [0, 1, 2, 3]}`,
		`{"timestamp": 1, "input_length": 8, "output_length": 2, "hash_ids": [0, 1]}`,
		`{"timestamp": 2, "input_length": 10, "output_length": 3, "hash_ids": [0, 1, 2]}`,
		`{"timestamp": 3, "input_length": 12, "output_length": 4, "hash_ids": [0, 4, 5]}`)
	p := Defaults()
	p.BlockSize, p.PrefixLenMultiplier = 4, 2
	assert.Equal(t, []string{
		`{"timestamp": 0, "input_length": 27, "output_length": 1, "hash_ids": [0, 1, 2, 3, 4, 5, 7]}`,
		`{"timestamp": 1, "input_length": 16, "output_length": 2, "hash_ids": [0, 1, 2, 3]}`,
		`{"timestamp": 2, "input_length": 22, "output_length": 3, "hash_ids": [0, 1, 2, 3, 4, 5]}`,
		`{"timestamp": 3, "input_length": 16, "output_length": 4, "hash_ids": [0, 1, 8, 9]}`,
	}, synth(t, in, p))
	p.PrefixLenMultiplier, p.PromptLenMultiplier, p.SpeedupRatio = 0.5, 2, 2
	assert.Equal(t, []string{
		`{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [0, 4, 5]}`,
		`{"timestamp": 0, "input_length": 4, "output_length": 2, "hash_ids": [0]}`,
		`{"timestamp": 1, "input_length": 2, "output_length": 3, "hash_ids": [0]}`,
		`{"timestamp": 1, "input_length": 20, "output_length": 4, "hash_ids": [0, 6, 7, 8, 9]}`,
	}, synth(t, in, p), "half the context blocks (at least one), twice the unique prompt, half the time")
}

// Every field is kept in its place; copies of the tree get disjoint ids
// and their own sessions; --max-isl drops the hash ids past the cap.
func TestRootMultiplierAndFields(t *testing.T) {
	in := write(t,
		`{"session_id": "a", "input_length": 1000, "hash_ids": [7, 8], "extra": {"k": [1, 2]}, "delay": 5}`,
		`{"session_id": "a", "input_length": 600, "hash_ids": [7, 9]}`,
		`{"text_input": "hello", "timestamp": 10.7}`)
	p := Defaults()
	p.PrefixRootMultiplier, p.MaxISL = 2, 520
	assert.Equal(t, []string{
		`{"session_id": "a", "input_length": 520, "hash_ids": [14, 18], "extra": {"k": [1, 2]}, "delay": 5}`,
		`{"session_id": "a#1", "input_length": 520, "hash_ids": [15, 19], "extra": {"k": [1, 2]}, "delay": 5}`,
		`{"session_id": "a", "input_length": 520, "hash_ids": [14, 20]}`,
		`{"session_id": "a#1", "input_length": 520, "hash_ids": [15, 21]}`,
		`{"text_input": "hello", "timestamp": 10}`,
		`{"text_input": "hello", "timestamp": 10}`,
	}, synth(t, in, p))
}

// A copy's name never merges it into another session: the trace's own
// "a#1" stays its own, and so do the copies of both.
func TestRootMultiplierNamesNoSessionTwice(t *testing.T) {
	in := write(t,
		`{"session_id": "a", "input_length": 10, "hash_ids": [1]}`,
		`{"session_id": "a", "input_length": 10, "hash_ids": [2]}`,
		`{"session_id": "a#1", "input_length": 10, "hash_ids": [3]}`)
	p := Defaults()
	p.BlockSize, p.PrefixRootMultiplier = 16, 2
	var names []string
	for _, l := range synth(t, in, p) {
		names = append(names, l[strings.Index(l, `"session_id": "`)+len(`"session_id": "`):strings.Index(l, `", "input`)])
	}
	assert.Equal(t, []string{"a", "a#1#1", "a", "a#1#1", "a#1", "a#1#1#1"}, names)
}

// The done-when of issue 24: --prefix-root-multiplier 3 on the public
// Mooncake slice gives three times the unique prefixes at the same
// per-request hit structure.
func TestRootMultiplierTriplesThePrefixes(t *testing.T) {
	in := filepath.Join("..", "dataset", "testdata", "mooncake_conversation_head200.jsonl")
	out := filepath.Join(t.TempDir(), "syn.jsonl")
	p := Defaults()
	p.PrefixRootMultiplier = 3
	st, err := WriteFile(context.Background(), in, out, p)
	require.NoError(t, err)
	assert.Equal(t, 3, st.InputLine(7, 3), "line 7 of the synthesis is a copy of row 3")
	assert.Zero(t, st.InputLine(601, 3))
	st.Lines = nil
	assert.Equal(t, Stats{Rows: 200, Written: 600, HashIDs: 5215, SharedIDs: 124, MaxDepth: 236}, st)
	info, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm(), "a file like any other, not a temporary one")
	o := traceanalysis.Options{BlockSize: DefaultBlockSize}
	before, err := traceanalysis.Analyze(context.Background(), in, o)
	require.NoError(t, err)
	after, err := traceanalysis.Analyze(context.Background(), out, o)
	require.NoError(t, err)
	assert.Equal(t, 3*before.UniquePrefixes, after.UniquePrefixes)
	assert.Equal(t, 3*before.TotalRequests, after.TotalRequests)
	assert.Equal(t, 3, after.NumPrefixGroups)
	assert.InDelta(t, before.CacheHitRate, after.CacheHitRate, 1e-12)
	assert.InDelta(t, before.PrefixReuseRatio, after.PrefixReuseRatio, 1e-12)
	assert.InDeltaMapValues(t, stats(before.HitRateStats), stats(after.HitRateStats), 1e-12)
	assert.InDeltaMapValues(t, stats(before.ContextStats), stats(after.ContextStats), 1e-9)
}

func stats(s *traceanalysis.MetricStats) map[string]float64 {
	return map[string]float64{"mean": s.Mean, "std": s.StdDev, "min": s.Min, "p25": s.P25, "median": s.Median, "p75": s.P75, "max": s.Max}
}

// Nothing is written from a malformed trace, and the problems are listed.
func TestMalformedInput(t *testing.T) {
	in := write(t, `{"input_length": 100, "hash_ids": [1, 2]}`, `{"input_length": "many"}`)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	_, err := WriteFile(context.Background(), in, out, Defaults())
	require.Error(t, err)
	assert.Contains(t, err.Error(), in+":1: hash_ids: input length: 100, hash ids: [1 2], block size: 512 are not compatible")
	assert.Contains(t, err.Error(), in+":2:18: input_length: expected an integer")
	assert.NoFileExists(t, out)
	entries, _ := os.ReadDir(filepath.Dir(out))
	assert.Empty(t, entries, "no temporary file left")
}

func TestParams(t *testing.T) {
	assert.False(t, Defaults().Active())
	p := Defaults()
	p.MaxISL = 10
	assert.True(t, p.Active())
	p = Params{SpeedupRatio: -1, PrefixLenMultiplier: 1, PrefixRootMultiplier: 0, PromptLenMultiplier: 1, MaxISL: -1, BlockSize: 0}
	err := p.Validate("synthesis-")
	require.Error(t, err)
	for _, want := range []string{"--synthesis-speedup-ratio must be a number ≥ 0, got -1", "--synthesis-prefix-root-multiplier must be between 1 and 1000, got 0",
		"--synthesis-max-isl must be at least 1 token", "--synthesis-block-size must be at least 1 token"} {
		assert.Contains(t, err.Error(), want)
	}
}

// A synthetic row longer than a trace may hold is refused, with its line.
func TestSynthesisBounds(t *testing.T) {
	in := write(t, `{"input_length": 1000, "hash_ids": [1, 2]}`, `{"input_length": 1000, "hash_ids": [1, 3]}`)
	p := Defaults()
	p.PrefixLenMultiplier = 1e6
	var out bytes.Buffer
	_, err := Synthesize(context.Background(), in, &out, p)
	assert.ErrorContains(t, err, in+":1: input_length: its synthetic input would be about 512000488 tokens")
	p = Defaults()
	p.PromptLenMultiplier = 40000
	_, err = Synthesize(context.Background(), in, &out, p)
	assert.ErrorContains(t, err, "past the 16777216 a trace row may hold: lower the multipliers or set --synthesis-max-isl", "profile's flag")
	p.Command = true
	_, err = Synthesize(context.Background(), in, &out, p)
	assert.ErrorContains(t, err, "past the 16777216 a trace row may hold: lower the multipliers or set --max-isl", "synthesize-trace's")
	p.MaxISL = 4096
	_, err = Synthesize(context.Background(), in, &out, p)
	assert.NoError(t, err, "--max-isl caps it")
}

// --synthesis-output-len-multiplier scales output_length, rounded half to
// even as AIPerf's round (75 × 2.5 = 187.5 → 188), before --max-osl caps
// it; a row without one keeps none.
func TestOutputLenMultiplier(t *testing.T) {
	in := write(t,
		`{"timestamp": 0, "input_length": 4, "output_length": 50}`,
		`{"timestamp": 1, "input_length": 4, "output_length": 75}`,
		`{"timestamp": 2, "input_length": 4}`)
	p := Defaults()
	p.OutputLenMultiplier = 2.5
	require.True(t, p.Active())
	assert.Equal(t, []string{
		`{"timestamp": 0, "input_length": 4, "output_length": 125}`,
		`{"timestamp": 1, "input_length": 4, "output_length": 188}`,
		`{"timestamp": 2, "input_length": 4}`,
	}, synth(t, in, p))
	p.MaxOSL = 160
	assert.Equal(t, `{"timestamp": 1, "input_length": 4, "output_length": 160}`, synth(t, in, p)[1])
	p.OutputLenMultiplier = 1e6
	_, err := Synthesize(context.Background(), in, &bytes.Buffer{}, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "output_length 50 × 1e+06 is 50000000, past the")
}

// Hash ids whose synthetic ids would pass the int64 range are refused
// with their line, never wrapped into another tree's ids.
func TestIDOverflowRefused(t *testing.T) {
	in := write(t,
		`{"input_length": 32, "hash_ids": [4611686018427387904, 1]}`,
		`{"input_length": 16, "hash_ids": [-4611686018427387904]}`,
		`{"input_length": 16, "hash_ids": [-4611686018427387904]}`,
		`{"input_length": 32, "hash_ids": [4611686018427387904, 3]}`)
	p := Defaults()
	p.BlockSize, p.PrefixRootMultiplier = 16, 2
	var out bytes.Buffer
	_, err := Synthesize(context.Background(), in, &out, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), in+":1: hash_ids: hash id 4611686018427387904 × 2 (--synthesis-prefix-root-multiplier) passes the int64 range")
	assert.Contains(t, err.Error(), in+":4: hash_ids:")
	assert.NotContains(t, err.Error(), in+":2:", "-2^62 × 2 + 1 fits")
	assert.NotContains(t, err.Error(), in+":3:")

	p = Defaults()
	p.BlockSize, p.PrefixLenMultiplier = 16, 2
	_, err = Synthesize(context.Background(), in, &out, p)
	assert.ErrorContains(t, err, in+":1: hash_ids: hash id 4611686018427387904 stretched 2-fold passes the int64 range")

	in = write(t, `{"input_length": 48, "hash_ids": [9223372036854775807, 1, 2]}`,
		`{"input_length": 48, "hash_ids": [9223372036854775807, 3, 4]}`)
	p = Defaults()
	p.BlockSize = 16
	_, err = Synthesize(context.Background(), in, &out, p)
	assert.ErrorContains(t, err, in+":1: hash_ids: its fresh hash ids, numbered past the largest shared id 9223372036854775807")
}

// A speed-up ratio that would put a timestamp past what a trace may hold
// (2^53 ms, what analyze-trace and profile accept) is refused with the
// line, the flag and the least ratio that keeps it; before, 100 / 1e-20
// wrapped to -9223372036854775808 and was written.
func TestSpeedupRatioOverflowRefused(t *testing.T) {
	in := write(t,
		`{"input_length": 8, "hash_ids": [1, 2], "timestamp": 0}`,
		`{"input_length": 8, "hash_ids": [1, 3], "timestamp": 100}`)
	p := Defaults()
	p.BlockSize, p.SpeedupRatio, p.Command = 4, 1e-20, true
	var out bytes.Buffer
	_, err := Synthesize(context.Background(), in, &out, p)
	assert.EqualError(t, err, in+":2: timestamp: timestamp 100 divided by --speedup-ratio 1e-20 is 1e+22 ms, "+
		"past the 9007199254740992 ms a trace timestamp may be: raise --speedup-ratio to at least 1.12e-14")
	p.Command = false
	_, err = Synthesize(context.Background(), in, &out, p)
	assert.ErrorContains(t, err, in+":2: timestamp: timestamp 100 divided by --synthesis-speedup-ratio 1e-20", "profile's flag")

	p.SpeedupRatio = 1.12e-14
	assert.Equal(t, `{"input_length": 8, "hash_ids": [1, 4], "timestamp": 8928571428571428}`, synth(t, in, p)[1], "the least ratio shown fits (the unique id 3 is fresh: 4)")
	p.SpeedupRatio = 0.5
	assert.Equal(t, `{"input_length": 8, "hash_ids": [1, 4], "timestamp": 200}`, synth(t, in, p)[1])
}

// synthesize-trace checks its input as profile checks a file given no
// other flag; profile's own synthesis leaves that to its dataset load,
// which knows --no-fixed-schedule.
func TestCommandChecksAsProfile(t *testing.T) {
	in := write(t, `{"input_length": 8, "hash_ids": [1, 2], "timestamp": 0}`, `{"input_length": 8, "hash_ids": [1, 3]}`)
	p := Defaults()
	p.BlockSize, p.MaxISL = 4, 8
	synth(t, in, p)
	p.Command = true
	_, err := Synthesize(context.Background(), in, &bytes.Buffer{}, p)
	assert.EqualError(t, err, in+":2: timestamp: the first turn of this conversation has no timestamp: a fixed schedule needs one on every conversation's first turn")
}
