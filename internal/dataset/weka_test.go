package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWekaDirectory(t *testing.T) {
	tok := o200k(t)
	d, convs := open(t, Options{InputFile: "testdata/files/weka", Seed: 5, OSLMean: 99})
	assert.True(t, IsTrace(d))
	assert.Equal(t, SamplingSequential, d.Sampling())
	require.Len(t, convs, 4, "trace_0001's main agent and 2 subagents; trace_0002's main agent (its leading subagent dropped)")
	assert.Equal(t, 6, Turns(d))

	main := convs[0]
	assert.Equal(t, "trace_0001", main.ID)
	assert.Equal(t, MessageArrayWithResponses, main.Mode, "each request holds its whole context: sent on its own")
	assert.True(t, main.ModelRanked)
	require.Len(t, main.Turns, 2, "the main agent's API calls, not its subagents'")
	for k, want := range []struct{ isl, osl int }{{100, 20}, {150, 30}} {
		assert.Equal(t, want.isl, main.Turns[k].InputTokens)
		assert.Equal(t, want.isl, tok.Count(main.Turns[k].Text), "turn %d: in tokens from its hash ids", k)
		assert.Equal(t, want.osl, main.Turns[k].MaxTokens, "out, not --osl")
		assert.Equal(t, 0, main.Turns[k].ModelRank, "the main model is the first --model")
	}
	assert.Equal(t, []float64{0, 600}, []float64{main.Turns[0].TimestampMs, main.Turns[1].TimestampMs}, "t in seconds made ms")
	assert.Equal(t, 600.0, main.Turns[1].DelayMs, "t_n - t_{n-1}")
	shared := len(strings.Fields(main.Turns[0].Text))
	assert.Equal(t, strings.Fields(main.Turns[0].Text), strings.Fields(main.Turns[1].Text)[:shared],
		"hash ids [1 2] then [1 2 3]: the first prompt is the second's prefix")

	sub := convs[1]
	assert.Equal(t, "trace_0001::sa:agent_001", sub.ID, "AIPerf's subagent session id")
	require.Len(t, sub.Turns, 2)
	assert.InDeltaSlice(t, []float64{300, 500}, []float64{sub.Turns[0].TimestampMs, sub.Turns[1].TimestampMs}, 1e-9,
		"auto: agent_002's t 0.1 is before its spawn at 0.8, so every subagent's times count from its spawn (0.1 + 0.2, 0.1 + 0.4)")
	assert.Equal(t, 1, sub.Turns[1].MaxTokens, "out 0 is floored to 1")
	assert.Equal(t, 1, sub.Turns[0].ModelRank, "the haiku subagent: the second --model")
	assert.Equal(t, 130, tok.Count(sub.Turns[1].Text))

	bg := convs[2]
	assert.Equal(t, "trace_0001::sa:agent_002", bg.ID)
	assert.InDelta(t, 900.0, bg.Turns[0].TimestampMs, 1e-9, "t 0.1 after the spawn at 0.8")

	other := convs[3]
	assert.Equal(t, "trace_0002", other.ID)
	require.Len(t, other.Turns, 1)
	assert.NotEqual(t, strings.Fields(main.Turns[0].Text)[:64], strings.Fields(other.Turns[0].Text)[:64],
		"hash id 1 of another trace is another block: each trace its own namespace")
	s := d.Schedule()
	require.Len(t, s, 4)
	for k, want := range []Timed{{0, 0}, {3, 300}, {1, 300}, {2, 900}} { // 0.1 + 0.2 s is 300.00000000000006 ms
		assert.Equal(t, want.Conv, s[k].Conv)
		assert.InDelta(t, want.AtMs, s[k].AtMs, 1e-9)
	}

	det, err := Detect("testdata/files/weka", "")
	require.NoError(t, err)
	assert.Equal(t, Detected{Type: TypeWekaTrace, Timestamped: true}, det, "a directory of Weka trace files")
	det, err = Detect("testdata/files/weka/trace_0002.json", "")
	require.NoError(t, err)
	assert.Equal(t, Detected{Type: TypeWekaTrace, Timestamped: true}, det, "one trace file")
}

func TestWekaSingleFileAndOffsets(t *testing.T) {
	_, convs := open(t, Options{InputFile: "testdata/files/weka/trace_0001.json", CustomType: TypeWekaTrace})
	require.Len(t, convs, 3)
	lo, hi := 350.0, 800.0
	_, convs = open(t, Options{InputFile: "testdata/files/weka/trace_0001.json", StartOffsetMs: &lo, EndOffsetMs: &hi})
	require.Len(t, convs, 2, "the window keeps the main agent's t=0.6 and agent_001's 0.1 + 0.4 (auto: relative)")
	assert.Equal(t, 150, convs[0].Turns[0].InputTokens)
	assert.Equal(t, 130, convs[1].Turns[0].InputTokens)
}

func TestWekaRefusesBadFiles(t *testing.T) {
	_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files/bad/weka.json", CustomType: TypeWekaTrace})
	require.Error(t, err)
	for _, want := range []string{
		"7 problems",
		`weka.json:5: hash_id_scope: expected "local"`,
		"weka.json:8: requests[1].t: expected a number, got a string",
		"weka.json:9: requests[2].temperature: unknown field (AIPerf's schema forbids it)",
		"weka.json:9: requests[2].in: expected an integer from 0 to 16777216, got -3",
		`weka.json:10: requests[3].type: expected "n" (an API call), "s" (a streaming API call) or "subagent", got "x"`,
		"weka.json:13: requests[4].requests[0].in: required",
		`weka.json:14: requests[4].requests[1].type: expected "n" or "s" (a subagent's requests are API calls), got "subagent"`,
	} {
		assert.Contains(t, err.Error(), want)
	}
	dir := t.TempDir()
	_, err = Open(context.Background(), o200k(t), Options{InputFile: dir, CustomType: TypeWekaTrace})
	assert.ErrorContains(t, err, "no .json trace files in the directory")
	_, err = Open(context.Background(), o200k(t), Options{InputFile: filepath.Join("testdata", "files", "weka"), CustomType: TypeMooncakeTrace})
	assert.ErrorContains(t, err, "weka_trace (one trace per file) read a directory")
}

// --trace-idle-gap-cap-seconds compresses the gaps between a trace's
// request starts, main agent and subagents together, and the delays
// follow the compressed timeline.
func TestWekaIdleGapCap(t *testing.T) {
	capMs := 150.0
	_, convs := open(t, Options{InputFile: "testdata/files/weka/trace_0001.json", Replay: Replay{TraceIdleGapCapMs: &capMs}, DelayCapMs: ptr(1.0)})
	require.Len(t, convs, 3)
	// starts 0, 0.3, 0.5, 0.6, 0.9 s (auto: relative): each 0.2 or 0.3 s gap is cut to 0.15 s
	main, sub, bg := convs[0], convs[1], convs[2]
	assert.InDeltaSlice(t, []float64{0, 400}, []float64{main.Turns[0].TimestampMs, main.Turns[1].TimestampMs}, 1e-9)
	assert.InDelta(t, 400.0, main.Turns[1].DelayMs, 1e-9, "from the compressed timeline, not capped at 1 ms")
	assert.InDeltaSlice(t, []float64{150, 300}, []float64{sub.Turns[0].TimestampMs, sub.Turns[1].TimestampMs}, 1e-9)
	assert.InDelta(t, 550.0, bg.Turns[0].TimestampMs, 1e-9)

	// the other replay controls are the JSONL formats' only
	for _, path := range []string{"testdata/files/weka/trace_0001.json", "testdata/files/weka"} {
		_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeWekaTrace,
			Replay: Replay{TraceIdleGapCapMs: &capMs, SampleRatio: 0.5}})
		assert.ErrorContains(t, err, "--trace-session-sample-ratio")
		assert.NotContains(t, err.Error(), "--trace-idle-gap-cap-seconds")
	}
	for _, path := range []string{"testdata/files/weka/trace_0001.json", "testdata/files/weka"} {
		_, err := Open(context.Background(), o200k(t), Options{InputFile: path, Replay: Replay{OmitKVHints: true}})
		assert.ErrorContains(t, err, "--omit-kv-hints applies to baseten_trace", "detected, a file or a directory")
	}
}

// --synthesis-max-isl drops the calls of more input tokens (and the
// subagents they spawn); --synthesis-max-osl caps the main agent's max
// tokens, not its subagents', as AIPerf's Weka filters do.
func TestWekaMaxISLAndOSL(t *testing.T) {
	_, convs := open(t, Options{InputFile: "testdata/files/weka", MaxISL: 120, MaxOSL: 8})
	require.Len(t, convs, 3, "trace_0001's call of 150 and agent_001's of 130 dropped; agent_001 keeps its call of 70")
	assert.Equal(t, "trace_0001", convs[0].ID)
	require.Len(t, convs[0].Turns, 1)
	assert.Equal(t, 8, convs[0].Turns[0].MaxTokens, "out 20 capped at 8")
	assert.Equal(t, "trace_0001::sa:agent_001", convs[1].ID)
	require.Len(t, convs[1].Turns, 1)
	assert.Equal(t, 10, convs[1].Turns[0].MaxTokens, "a subagent's call keeps its out")
	assert.Equal(t, "trace_0002", convs[2].ID, "agent_002 is spawned after the dropped call of 150: dropped too")

	_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files/weka/trace_0001.json", MaxISL: 90})
	assert.ErrorContains(t, err, "trace_0001.json: no requests left: every call has more than 90 input tokens (--synthesis-max-isl) "+
		"or falls outside the fixed schedule window [-∞, +∞] ms, or only subagents without a main-agent call before them are left")
}

// The main agent's call after a subagent waits for it (Turn.Join, AIPerf's
// SPAWN_JOIN); a subagent with no main-agent call after it, or whose next
// call is dropped, runs in the background.
func TestWekaJoins(t *testing.T) {
	_, convs := open(t, Options{InputFile: "testdata/files/weka"})
	require.Len(t, convs, 4)
	assert.Nil(t, convs[0].Turns[0].Join)
	assert.Equal(t, []int{1}, convs[0].Turns[1].Join, "trace_0001's second call waits for agent_001 (conversation 1)")
	assert.Nil(t, convs[1].Turns[1].Join, "a subagent's calls wait for nothing")
	assert.Nil(t, convs[3].Turns[0].Join, "trace_0002's dropped leading subagent is waited for by none")

	_, convs = open(t, Options{InputFile: "testdata/files/weka/trace_0001.json", MaxISL: 120})
	require.Len(t, convs, 2)
	assert.Nil(t, convs[0].Turns[0].Join)
}

// --use-think-time-only sends a trace's later calls their recorded
// think_time after the previous reply (none recorded: at once), not at
// their start times; --max-context-length drops whole traces by the
// largest in+out of one call (trace_0001's is 150+30).
func TestWekaThinkTimeAndMaxContext(t *testing.T) {
	const path = "testdata/files/weka/trace_0001.json"
	_, convs := open(t, Options{InputFile: path, FixedSchedule: true, Replay: Replay{ThinkTimeOnly: true}})
	require.Len(t, convs, 3)
	main, sub := convs[0], convs[1]
	require.Len(t, main.Turns, 2)
	assert.True(t, main.Turns[0].HasTimestamp, "a session's first call keeps its start")
	assert.False(t, main.Turns[1].HasTimestamp)
	assert.InDelta(t, 100.0, main.Turns[1].DelayMs, 1e-9, "its think_time, 0.1 s, not the 0.6 s since the first call")
	require.Len(t, sub.Turns, 2)
	assert.False(t, sub.Turns[1].HasTimestamp)
	assert.Zero(t, sub.Turns[1].DelayMs, "no think_time recorded")

	_, convs = open(t, Options{InputFile: path, Replay: Replay{MaxContext: 180}})
	assert.Len(t, convs, 3, "a peak of exactly the limit is kept")
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, Replay: Replay{MaxContext: 179}})
	assert.ErrorContains(t, err, "is in one of the 1 traces longer than --max-context-length 179")
}

// wekaManySubagents writes a trace of a main agent's call and n subagents
// of one call each, 10 s apart, and returns its path and size.
func wekaManySubagents(t testing.TB, n int) (string, int) {
	var b strings.Builder
	b.WriteString(`{"id": "wide", "models": ["m"], "block_size": 64, "hash_id_scope": "local", "tool_tokens": 0, "system_tokens": 0,
  "requests": [
    {"t": 0.0, "type": "s", "model": "m", "in": 16, "out": 4, "hash_ids": [1]}`)
	for i := range n {
		fmt.Fprintf(&b, `,
    {"t": %d.0, "type": "subagent", "agent_id": "agent_%d", "subagent_type": "Explore", "status": "completed", "models": ["m"],
     "requests": [{"t": %d.5, "type": "n", "model": "m", "in": 16, "out": 4, "hash_ids": [%d]}]}`, 10*(i+1), i, 10*(i+1), i+2)
	}
	b.WriteString("\n  ]\n}\n")
	path := filepath.Join(t.TempDir(), "wide.json")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path, b.Len()
}

// TestWekaManySubagentsReadOnce: a trace's conversations (its main agent,
// then each subagent) read one after another cost about one parse of the
// file, not one each: reading all 401 allocates less than three times
// what reading the first (which parses the file) does.
func TestWekaManySubagentsReadOnce(t *testing.T) {
	path, size := wekaManySubagents(t, 400)
	capMs := 1000.0 // 400 idle gaps to warp
	d, err := Open(context.Background(), o200k(t), Options{InputFile: path, Replay: Replay{TraceIdleGapCapMs: &capMs}})
	require.NoError(t, err)
	defer d.Close()
	require.Equal(t, 401, d.Len())
	var first, all uint64
	for i := range d.Len() {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c, err := d.Conversation(i)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		all += after.TotalAlloc - before.TotalAlloc
		if i == 0 {
			first = all
			continue
		}
		require.Len(t, c.Turns, 1)
		assert.InDelta(t, 1000*float64(i), c.Turns[0].TimestampMs, 1e-6, "every gap of 10 s or more between calls warped to 1 s")
	}
	t.Logf("a file of %d bytes: its first conversation allocated %d bytes, all %d", size, first, all)
	assert.Less(t, all, 3*first, "a parse per conversation")
}

// wekaCalls is a trace of n calls, one a line, each of in input tokens.
func wekaCalls(n, in int) string {
	var b strings.Builder
	b.WriteString(`{"id": "t", "models": ["m"], "block_size": 64, "hash_id_scope": "local", "requests": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n{\"t\": %d, \"type\": \"n\", \"model\": \"m\", \"in\": %d, \"out\": 1}", i, in)
	}
	b.WriteString("\n]}\n")
	return b.String()
}

// TestWekaManyProblemsCounted: a file of a thousand bad calls is refused
// with the first 50 listed and the rest counted (a few times 50 are held
// to be placed, however many the file has).
func TestWekaManyProblemsCounted(t *testing.T) {
	doc := wekaCalls(1000, -1)
	_, ps, more := parseWeka(context.Background(), []byte(doc))
	assert.Len(t, ps, wekaKeptProblems)
	assert.Equal(t, 1000-wekaKeptProblems, more)

	path := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeWekaTrace})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1000 problems")
	assert.Contains(t, err.Error(), "bad.json:2: requests[0].in: expected an integer from 0 to")
	assert.Contains(t, err.Error(), "and 950 more problems")
	assert.Len(t, lineErrors(err), 50)
}

// FuzzWekaIntList: where the fast reader of hash ids takes a list, it reads
// what json.Unmarshal reads; where it does not, json.Unmarshal decides.
func FuzzWekaIntList(f *testing.F) {
	for _, s := range []string{"[]", " [ 1 , -2,3 ] ", "[9223372036854775807]", "[9223372036854775808]", "[-9223372036854775808]",
		"[1.0]", "[1e3]", "[null]", `["1"]`, "[-0]", "[1,]", "[01]", "[-]", "[1 2]", "[1]x", "null", "{}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := intList(raw)
		if !ok {
			return
		}
		var want []int64
		require.NoError(t, json.Unmarshal(raw, &want), "%q", raw)
		if want == nil {
			want = []int64{}
		}
		assert.Equal(t, want, got, "%q", raw)
	})
}

// TestWekaTypeNotAString: a request whose type is there but not a string is
// refused with that said (it was dropped without a word).
func TestWekaTypeNotAString(t *testing.T) {
	doc := `{"id": "x", "models": ["m"], "block_size": 64, "hash_id_scope": "local", "requests": [
  {"t": 0, "type": 5, "model": "m", "in": 1, "out": 1},
  {"t": 1, "type": null, "model": "m", "in": 1, "out": 1}
]}`
	_, ps, _ := parseWeka(context.Background(), []byte(doc))
	require.Len(t, ps, 2)
	assert.Equal(t, "requests[0].type", ps[0].p.Field)
	assert.Equal(t, "expected a string, got a number", ps[0].p.Msg)
	assert.Equal(t, "requests[1].type", ps[1].p.Field)
	assert.Contains(t, ps[1].p.Msg, "expected a string, got null")
}

// TestWekaParseStops: a parse whose context is done stops between
// requests (a 256 MiB file takes seconds), and loading the file says so.
func TestWekaParseStops(t *testing.T) {
	doc := wekaCalls(200, 1)
	tr, ps, _ := parseWeka(context.Background(), []byte(doc))
	require.Nil(t, ps)
	require.Len(t, tr.Requests, 200)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr, _, _ = parseWeka(ctx, []byte(doc))
	assert.Empty(t, tr.Requests, "stopped before the first request")

	path := filepath.Join(t.TempDir(), "t.json")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	_, _, err := readWekaFile(ctx, path, "")
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "stopped reading "+path)
}
