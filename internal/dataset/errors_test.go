package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lineErrors returns every LineError in err's tree, in order.
func lineErrors(err error) []*LineError {
	var out []*LineError
	var walk func(error)
	walk = func(err error) {
		if le, ok := err.(*LineError); ok {
			out = append(out, le)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			if e := u.Unwrap(); e != nil {
				walk(e)
			}
		}
	}
	walk(err)
	return out
}

// wantProblems opens path and checks that it fails with exactly one
// problem on each given line, whose text contains the given string.
func wantProblems(t *testing.T, o Options, want map[int]string) {
	t.Helper()
	_, err := Open(context.Background(), o200k(t), o)
	require.Error(t, err)
	got := map[int]string{}
	for _, le := range lineErrors(err) {
		assert.Equal(t, o.InputFile, le.Path)
		assert.NotContains(t, got, le.Line, "one problem per line: %v", le)
		got[le.Line] = le.Error()
	}
	for line, msg := range want {
		assert.Contains(t, got[line], fmt.Sprintf("%s:%d", o.InputFile, line))
		assert.Contains(t, got[line], msg, "line %d", line)
	}
	assert.Len(t, got, len(want), "problems: %s", err)
	assert.Contains(t, err.Error(), fmt.Sprintf("%d problems:\n", len(want)))
}

func TestMooncakeProblems(t *testing.T) {
	wantProblems(t, Options{InputFile: "testdata/files/bad/mooncake.jsonl"}, map[int]string{
		2:  "mooncake.jsonl:2:18: input_length: expected an integer, got a JSON string",
		3:  "hash_ids: input length: 500, hash ids: [1 2], block size: 512 are not compatible: the final hash block size: -12 must be greater than 0",
		4:  "are mutually exclusive",
		5:  "exactly one of 'input_length', 'text_input', 'messages', or 'payload' must be provided",
		6:  "hash_ids: 'hash_ids' is only allowed when 'input_length' is provided",
		7:  "tools: 'tools' is only allowed when 'messages' is provided",
		8:  "messages: 'messages' must be a non-empty list",
		9:  "messages[0]: each message must have a 'role' key",
		10: "timestamp: expected a number of milliseconds ≥ 0, got -5",
		11: "output_length: expected an integer from 1 to 16777216, got 0",
		12: "extra: expected an object, got a list",
		13: "mooncake.jsonl:13:21: invalid JSON near …`length\": 10,, }`: invalid character ',' looking for beginning of object key string",
		14: "mooncake.jsonl:14:1: expected a JSON object, got a list",
		15: "a single_turn record in a mooncake_trace file: one file holds one record type",
		16: "a multi_turn record in a mooncake_trace file",
		17: "payload: 'payload' must be a non-empty object",
		18: "input_length: expected an integer from 1 to 16777216, got 0",
		20: `timestamp: timestamp 50 goes backwards: session "s" (first row at line 19) was at 100 on line 19`,
		22: `session_id: session "m" (first row at line 21): mixed Mooncake sessions with both raw`,
		23: "message_mode: message_mode 'delta' is only supported with 'messages'",
		24: "session_id: expected a string, got a JSON number",
		25: "hash_ids: expected an integer, got a JSON string",
		26: `context_mode: payload rows need context_mode "message_array_with_responses", got "deltas_without_responses"`,
		// more tokens than its blocks cover (AIPerf refuses it: the prefix
		// sharing of a trace replayed with smaller blocks would be lost)
		27: "hash_ids: input length: 600, hash ids: [1], block size: 512 are not compatible: the final hash block size: 600 must be greater than 0 and less than or equal to 512 (1 hash ids need an input_length of 1 to 512",
	})
}

func TestTextProblems(t *testing.T) {
	wantProblems(t, Options{InputFile: "testdata/files/bad/single_turn.jsonl"}, map[int]string{
		2:  "text: text and texts cannot be set together",
		3:  "at least one modality must be provided",
		4:  "timestamp: timestamp and delay cannot be set together",
		5:  `image: image file "x.png" does not exist`,
		6:  "texts: expected a list of strings or of",
		7:  "output_length: expected an integer greater than 0, got -1",
		9:  `timestamp 5 goes backwards: session "s" (first row at line 8) was at 10 on line 8`,
		10: "a multi_turn record in a single_turn file",
		11: "text: expected a string, got a JSON number",
	})
	wantProblems(t, Options{InputFile: "testdata/files/bad/multi_turn.jsonl", CustomType: TypeMultiTurn}, map[int]string{
		1: "turns: at least one turn must be provided",
		2: "turns[1].timestamp: timestamp 5 goes backwards: turns[0] is at 10",
		3: "turns[1].texts: expected a list of strings",
		4: "turns: at least one turn must be provided",
		5: `turns[0].image: image file "a.png" does not exist`,
		6: `turns[0].type: expected "single_turn" for a turn, got "mooncake_trace"`,
	})
	wantProblems(t, Options{InputFile: "testdata/files/bad/random_pool.jsonl"}, map[int]string{
		2: "at least one modality must be provided",
		3: "a single_turn record in a random_pool file",
	})
}

func TestShareGPTProblems(t *testing.T) {
	path := "testdata/files/bad/sharegpt.json"
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, PublicDataset: PublicShareGPT})
	require.Error(t, err)
	les := lineErrors(err)
	require.Len(t, les, 3, "%v", err)
	assert.Equal(t, path+":3:21: conversations: expected a list, got a JSON string", les[0].Error())
	assert.Equal(t, path+":4:49: conversations.value: expected a string, got a JSON number", les[1].Error())
	assert.Equal(t, 5, les[2].Line)
	assert.Contains(t, les[2].Msg, "invalid JSON")

	dir := t.TempDir()
	notObject := filepath.Join(dir, "str.jsonl")
	require.NoError(t, os.WriteFile(notObject, []byte("{\"conversations\": []}\n\"a string\"\n"), 0o644))
	_, err = Open(context.Background(), o200k(t), Options{InputFile: notObject, PublicDataset: PublicShareGPT})
	require.ErrorContains(t, err, "str.jsonl:2:1: expected a JSON object, got a string")
}

func TestProblemsCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "many.jsonl")
	long := `{"input_length": 5, "x": "` + strings.Repeat("y", 100_000)
	lines := []string{long}
	for i := range 119 {
		lines = append(lines, fmt.Sprintf(`{"input_length": %d.5}`, i))
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeMooncakeTrace})
	require.Error(t, err)
	msg := err.Error()
	assert.Len(t, lineErrors(err), maxProblems)
	assert.Contains(t, msg, "120 problems:\n")
	assert.True(t, strings.HasSuffix(msg, "\nand 70 more problems"), msg)
	assert.Less(t, len(msg), 200*maxProblems, "no long line is echoed")
	first := lineErrors(err)[0]
	assert.Equal(t, 1, first.Line)
	assert.Less(t, len(first.Msg), 200, first.Msg)
	assert.Equal(t, path+":2:18: input_length: expected an integer, got a JSON number 0.5", lineErrors(err)[1].Error())
}

func TestFileProblems(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	tok := o200k(t)
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"empty", Options{InputFile: write("empty.jsonl", "\n  \n\t\n")}, "empty.jsonl: no records: the file is empty or holds only blank lines"},
		{"empty typed", Options{InputFile: write("empty2.jsonl", ""), CustomType: TypeMooncakeTrace}, "empty2.jsonl: no records"},
		{"missing", Options{InputFile: filepath.Join(dir, "nope.jsonl")}, "is not a valid file or directory"},
		{"unknown format", Options{InputFile: write("foo.jsonl", `{"foo": 1}`)},
			"foo.jsonl:1: no loader can handle the data format: specify --custom-dataset-type explicitly"},
		{"ambiguous", Options{InputFile: write("amb.jsonl", "\n"+`{"text": "x", "input_length": 5}`)},
			"amb.jsonl:2: multiple loaders can handle the data format: single_turn and mooncake_trace"},
		{"typed but invalid", Options{InputFile: write("typed.jsonl", `{"type": "mooncake_trace"}`)},
			"typed.jsonl:1: exactly one of 'input_length', 'text_input', 'messages', or 'payload' must be provided (the record's type is mooncake_trace)"},
		{"bad json first", Options{InputFile: write("syntax.jsonl", `{"text": }`)}, "syntax.jsonl:1:10: invalid JSON near `{\"text\": }`: invalid character '}' looking for beginning of value"},
		{"window empty", Options{InputFile: head200, FixedSchedule: true, StartOffsetMs: ptr(1e9)},
			"no records left: all 200 rows have timestamps outside the fixed schedule window [1e+09, +∞] ms"},
		{"fixed schedule without timestamps", Options{InputFile: write("nots.jsonl", `{"input_length": 5}`), FixedSchedule: true},
			"no conversations with valid first-turn timestamps found"},
		{"delta with offsets", Options{InputFile: "testdata/files/mooncake_sessions.jsonl", FixedSchedule: true, EndOffsetMs: ptr(5000.0)},
			"mooncake_sessions.jsonl:6: message_mode: delta rows cannot be replayed with fixed schedule start/end offsets"},
		{"fixed schedule of a pool", Options{InputFile: "testdata/files/random_pool.jsonl", FixedSchedule: true},
			"random_pool dataset: a fixed schedule needs timestamps, and random_pool rows have none"},
		{"fixed schedule of sharegpt", Options{InputFile: "testdata/files/sharegpt.json", PublicDataset: PublicShareGPT, FixedSchedule: true},
			"sharegpt dataset: a fixed schedule needs timestamps"},
		{"block size", Options{InputFile: head200, BlockSize: 1024},
			"mooncake_conversation_head200.jsonl:1: hash_ids: input length: 6758, hash ids: [0 1 2 3 4 5 6 7] … (14 ids), block size: 1024 are not compatible: the final hash block size: -6554 must be greater than 0 and less than or equal to 1024 (14 hash ids need an input_length of 13313 to 14336: replay a trace with the block size it was made with, --prompt-input-tokens-block-size)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(context.Background(), tok, c.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestOptionProblems(t *testing.T) {
	tok := o200k(t)
	cases := []struct {
		o    Options
		want string
	}{
		{Options{CustomType: "csv"}, `unknown custom dataset type "csv"`},
		{Options{PublicDataset: PublicShareGPT}, "--public-dataset sharegpt reads a local copy given with --input-file (it is never downloaded)"},
		{Options{InputFile: "x", PublicDataset: PublicShareGPT, CustomType: TypeSingleTurn}, "the --public-dataset and --custom-dataset-type options cannot be set together"},
		{Options{CustomType: TypeMooncakeTrace}, "custom dataset type requires --input-file to be provided"},
		{Options{FixedSchedule: true}, "fixed schedule requires a file to be provided"},
		{Options{InputFile: head200, FixedSchedule: true, Sampling: SamplingRandom}, "dataset sampling strategy is not compatible with fixed schedule mode"},
		{Options{Sampling: "roundrobin"}, `unknown dataset sampling strategy "roundrobin"`},
		{Options{PrefixLength: 10}, "needs --prompt-prefix-pool-size of at least 1"},
		{Options{PrefixLength: 10, PrefixPoolSize: 2, SharedSystemLength: 5}, "these are mutually exclusive prompt configuration modes"},
		{Options{InputFile: head200, StartOffsetMs: ptr(1.0), AutoOffset: true}, "the --fixed-schedule-start-offset and --fixed-schedule-auto-offset options cannot be used together"},
		{Options{InputFile: head200, StartOffsetMs: ptr(10.0), EndOffsetMs: ptr(5.0)}, "must be less than or equal to the --fixed-schedule-end-offset"},
		{Options{TurnDelayRatio: ptr(-1.0)}, "conversation turn delay ratio must be a finite number ≥ 0"},
		{Options{BlockSize: -1}, "block size must be at least 1"},
		{Options{InputFile: head200, OSLStddev: -2}, "output tokens mean must not be negative and its stddev must be a finite number ≥ 0"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			c.o.ISLMean = max(c.o.ISLMean, 10)
			_, err := Open(context.Background(), tok, c.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.True(t, strings.HasPrefix(err.Error(), "dataset options: "), err.Error())
			assert.False(t, errors.As(err, new(*LineError)))
		})
	}
}

// TestTraceHorizon: a timestamp further than a year after the schedule's
// zero, or beyond 2^53 ms, and a delay longer than a day are refused before
// any traffic, naming the file, the line and the value, in every format
// that has them; timestamps that count from an epoch are accepted with
// --fixed-schedule-auto-offset and refused without it, with that hint.
// Before, the replay waited for them (a timestamp of 1e15 ms is 31,710
// years) or overflowed the schedule's nanoseconds.
func TestTraceHorizon(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	const epoch = 1_767_225_600_000.0 // 2026-01-01 in ms
	mooncake := write("mooncake.jsonl", fmt.Sprintf(`{"timestamp": %[1]v, "input_length": 10}
{"timestamp": %[2]v, "input_length": 10}
{"session_id": "s", "timestamp": %[3]v, "input_length": 10}
{"session_id": "s", "delay": 500, "input_length": 10}
`, epoch, epoch+1000, epoch+2000))
	_, err := Open(context.Background(), o200k(t), Options{InputFile: mooncake, AutoOffset: true, FixedSchedule: true})
	require.NoError(t, err, "epoch timestamps from the first one")
	wantProblemsOf(t, Options{InputFile: mooncake, FixedSchedule: true}, map[int]string{
		3: "timestamp: timestamp 1.767225602e+12 is 56 years after the schedule's zero, 0 (timestamps count from the start of the run): " +
			"beyond the year a replay may last (timestamps are milliseconds); timestamps that count from an epoch need --fixed-schedule-auto-offset",
	})

	for _, tt := range []struct {
		name, content string
		o             Options
		want          map[int]string
	}{
		{"mooncake.jsonl", `{"timestamp": 0, "input_length": 10}` + "\n" + `{"timestamp": 1e15, "input_length": 10}` + "\n" +
			`{"session_id": "x", "timestamp": 1, "input_length": 10}` + "\n" + `{"session_id": "x", "delay": 1e12, "input_length": 10}` + "\n" +
			`{"timestamp": 1e300, "input_length": 10}` + "\n",
			Options{FixedSchedule: true, AutoOffset: true}, map[int]string{
				4: "delay: expected at most 86400000 milliseconds (a day), got 1e+12",
				5: "timestamp: expected at most 9007199254740992 milliseconds, got 1e+300",
			}},
		{"mooncake2.jsonl", `{"timestamp": 0, "input_length": 10}` + "\n" + `{"timestamp": 1e15, "input_length": 10}` + "\n",
			Options{FixedSchedule: true, AutoOffset: true}, map[int]string{
				2: "timestamp: timestamp 1e+15 is 31710 years after the schedule's zero, 0, the first timestamp (--fixed-schedule-auto-offset)",
			}},
		{"single.jsonl", `{"text": "a", "timestamp": 5}` + "\n" + `{"text": "b", "timestamp": 31536000006}` + "\n",
			Options{CustomType: TypeSingleTurn, FixedSchedule: true, StartOffsetMs: ptr(5.0)}, map[int]string{
				2: "timestamp: timestamp 3.1536000006e+10 is 365 days after the schedule's zero, 5 (--fixed-schedule-start-offset)",
			}},
		{"multi.jsonl", `{"session_id": "m", "turns": [{"text": "a", "timestamp": 1}, {"text": "b", "timestamp": 4e10}]}` + "\n" +
			`{"session_id": "n", "turns": [{"text": "a", "timestamp": 2}, {"text": "b", "delay": 86400001}]}` + "\n",
			Options{CustomType: TypeMultiTurn}, map[int]string{
				2: "turns[1].delay: expected at most 86400000 milliseconds (a day), got 8.6400001e+07",
			}},
		{"multi2.jsonl", `{"session_id": "m", "turns": [{"text": "a", "timestamp": 1}, {"text": "b", "timestamp": 4e10}]}` + "\n",
			Options{CustomType: TypeMultiTurn}, map[int]string{
				1: "timestamp: timestamp 4e+10 is 463 days after the schedule's zero, 0",
			}},
	} {
		tt.o.InputFile = write(tt.name, tt.content)
		wantProblemsOf(t, tt.o, tt.want)
	}
}

// wantProblemsOf is wantProblems for one or more problems.
func wantProblemsOf(t *testing.T, o Options, want map[int]string) {
	t.Helper()
	_, err := Open(context.Background(), o200k(t), o)
	require.Error(t, err, o.InputFile)
	got := map[int]string{}
	for _, le := range lineErrors(err) {
		got[le.Line] = le.Error()
	}
	for line, msg := range want {
		assert.Contains(t, got[line], fmt.Sprintf("%s:%d: ", o.InputFile, line))
		assert.Contains(t, got[line], msg, "line %d", line)
	}
	assert.Len(t, got, len(want), "problems: %s", err)
}

func TestBailianProblems(t *testing.T) {
	wantProblems(t, Options{InputFile: "testdata/files/bad/bailian.jsonl", CustomType: TypeBailianTrace}, map[int]string{
		2:  "input_length: required: a Bailian record has chat_id, timestamp (seconds), input_length and output_length",
		3:  "hash_ids: input length: 20, hash ids: [1 2 3], block size: 16 are not compatible",
		4:  "timestamp: expected a number of seconds ≥ 0, got -1",
		5:  "output_length: expected an integer from 1 to 16777216, got 0",
		6:  `timestamp: timestamp 250 goes backwards: session "1" (first row at line 1) was at 500 on line 1`,
		10: `turn: turn 2 comes after turn 3 of session "1" (first row at line 1): list a session's turns in order`,
		11: "bailian.jsonl:11:13: chat_id: expected an integer, got a JSON string",
		12: "turn: expected a turn number of at least 1, got 0",
		13: "a mooncake_trace record in a bailian_trace file: one file holds one record type",
	})
}

func TestInputsJSONProblems(t *testing.T) {
	wantProblems(t, Options{InputFile: "testdata/files/bad/inputs.json", CustomType: TypeInputsJSON}, map[int]string{
		3: "data[1].session_id: required: a string naming the session",
		4: "data[2].payloads: expected at least one request body, got an empty list",
		5: "data[3].payloads[1]: expected a request body (an object), got a string",
		6: `data[4].session_id: session "a" is also on line 2: each entry is one session`,
		7: "bad/inputs.json:7:18: data[5].session_id: expected a string, got a JSON number",
		8: "bad/inputs.json:8:3: data[6]: expected a JSON object, got a list",
		9: "data[7].payloads: required: the list of the session's request bodies",
	})
	for content, want := range map[string]string{
		"[1, 2]":                           `x.json:1:1: expected a JSON object {"data": [`,
		`{"sessions": []}`:                 `x.json:1:16: no "data" list`,
		"{\"data\": [\n {\"session_id\": ": "x.json:2:17: the document ends too early",
		"{\"data\": [\n {\"session_id\" 1": "x.json:2:16: invalid JSON: invalid character '1' after object key",
		`{"data": []}`:                     `x.json: no sessions: the "data" list is empty`,
		`{"data": {}}`:                     "x.json:1:10: data: expected a list of sessions",
	} {
		path := filepath.Join(t.TempDir(), "x.json")
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeInputsJSON})
		require.Error(t, err, content)
		assert.Contains(t, err.Error(), path[:len(path)-len("x.json")]+want, content)
	}
}

func TestBurstGPTProblems(t *testing.T) {
	wantProblems(t, Options{InputFile: "testdata/files/bad/burstgpt.csv", CustomType: TypeBurstGPTTrace}, map[int]string{
		3: `Timestamp: expected a number of seconds, got "soon"`,
		4: "Request tokens: expected an integer from 1 to 16777216, got 0",
		5: "Response tokens: expected an integer from 0 to 16777216, got -1",
		6: "expected at least 4 comma-separated fields, as the header has, got 3",
		7: "Timestamp: expected a number of seconds ≥ 0, got -2",
		8: `Request tokens: expected an integer, got "2.5"`,
		9: `burstgpt.csv:9:15: invalid CSV: extraneous or missing " in quoted-field`,
	})
	path := filepath.Join(t.TempDir(), "x.csv")
	require.NoError(t, os.WriteFile(path, []byte("Timestamp,Model,Request tokens\n1,m,2\n"), 0o644))
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeBurstGPTTrace})
	require.ErrorContains(t, err, path+`:1: a BurstGPT CSV file's header names the columns ["Timestamp" "Request tokens" "Response tokens"]; missing ["Response tokens"]`)
}

func TestRawPayloadProblems(t *testing.T) {
	want := map[int]string{
		2: `messages: expected a list of messages (a raw payload is a request body with a "messages" list), got nothing`,
		3: "messages: expected a list of messages",
		4: "raw_payload.jsonl:4:1: expected a JSON object, got a list",
		5: "raw_payload.jsonl:5:15: invalid JSON near",
	}
	wantProblems(t, Options{InputFile: "testdata/files/bad/raw_payload.jsonl", CustomType: TypeRawPayload}, want)

	dir := t.TempDir()
	bad, err := os.ReadFile("testdata/files/bad/raw_payload.jsonl")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.jsonl"), bad, 0o644))
	_, err = Open(context.Background(), o200k(t), Options{InputFile: dir, CustomType: TypeRawPayload})
	require.Error(t, err)
	assert.Len(t, lineErrors(err), 4, "a directory's files are checked line by line too: %v", err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "a.jsonl")+":4:1: expected a JSON object, got a list")
}

func TestSageMakerCaptureProblems(t *testing.T) {
	wantProblems(t, Options{InputFile: "testdata/files/bad/sagemaker.jsonl", CustomType: TypeSageMakerCapture}, map[int]string{
		2: `eventMetadata.inferenceTime: expected an ISO 8601 time after 1970 such as "2026-04-29T00:03:18Z", got "yesterday"`,
		3: "captureData.endpointInput.data.messages: required: only OpenAI-compatible chat requests (with a messages list) can be replayed",
		4: `captureData.endpointInput.encoding: expected "JSON" or "BASE64" (a chat request), got "CSV"`,
		5: "captureData.endpointInput.data: expected base64 (its encoding is BASE64)",
		6: "captureData.endpointInput.data: required: the captured request",
		7: "captureData.endpointInput.data.max_tokens: expected an integer from 1 to 16777216, got 0",
		8: "captureData.endpointInput.data.messages[0]: each message must have a 'role' key",
	})
	_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files", CustomType: TypeSageMakerCapture})
	require.ErrorContains(t, err, "is a directory: give one capture file (concatenate them")
}

// TestNotUTF8Problem: a line that is not UTF-8 is refused at its first bad
// byte's column, where a decoder would have sent U+FFFD.
func TestNotUTF8Problem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "latin1.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{\"text\": \"ok\"}\n{\"text\": \"caf\xe9 \xff\"}\n"), 0o644))
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path})
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":2:14: invalid UTF-8 (byte 0xe9): save the file as UTF-8")
	assert.NotContains(t, err.Error(), ":1:", "the first line is fine")
}

// The year a replay may last is checked in replay time: timestamps and
// delays divided by --replay-speedup (and after the idle-gap caps), so a
// slow-down that would schedule a request years out is refused before any
// traffic, naming the flag and the speed-up it needs. Before, the check
// ran on the recorded times and the replay waited for years.
func TestTraceHorizonAfterSpeedup(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	two := write("yr2.jsonl", `{"input_length": 8, "hash_ids": [1,2], "timestamp": 0}`+"\n"+
		`{"input_length": 8, "hash_ids": [1,3], "timestamp": 100}`+"\n")
	fixed := func(path string, r Replay) Options {
		return Options{InputFile: path, FixedSchedule: true, Replay: r, BlockSize: 4}
	}
	wantProblemsOf(t, fixed(two, Replay{Speedup: 1e-9}), map[int]string{
		2: "timestamp: timestamp 100 is 100ms after the schedule's zero, 0 (timestamps count from the start of the run), " +
			"and --replay-speedup 1e-09 makes that 3 years of replay: beyond the year a replay may last: raise --replay-speedup to at least 3.18e-09",
	})
	for _, r := range []Replay{{Speedup: 3.18e-9}, {Speedup: 1e-9, IdleGapCapMs: ptr(1000.0)}} {
		_, err := Open(context.Background(), o200k(t), fixed(two, r))
		assert.NoError(t, err, "within a year of replay: %+v", r)
	}

	gap := write("gap.jsonl", `{"input_length": 8, "timestamp": 0}`+"\n"+`{"input_length": 8, "timestamp": 4e10}`+"\n")
	_, err := Open(context.Background(), o200k(t), fixed(gap, Replay{IdleGapCapMs: ptr(1000.0), Speedup: 0.5}))
	assert.NoError(t, err, "a 463-day gap collapsed to 1 s of replay")

	delay := write("delay.jsonl", `{"session_id": "s", "input_length": 8, "timestamp": 0}`+"\n"+
		`{"session_id": "s", "input_length": 8, "delay": 50}`+"\n")
	wantProblemsOf(t, fixed(delay, Replay{Speedup: 1e-9}), map[int]string{
		2: "delay: delay 50 ms and --replay-speedup 1e-09 make a wait of 579 days: beyond the year a replay may last: raise --replay-speedup to at least 1.59e-09",
	})
	o := fixed(delay, Replay{Speedup: 1e-9})
	o.DelayCapMs = ptr(60_000.0)
	_, err = Open(context.Background(), o200k(t), o)
	assert.NoError(t, err, "--inter-turn-delay-cap-seconds caps the wait")
}

// A JSON error shows the text around it with its own quotes as they are
// (before: …"timestamp\": NaN}"), and escapes only what a terminal must
// not see raw.
func TestExcerptQuoting(t *testing.T) {
	line := []byte(`{"input_length": 8, "hash_ids": [1,2], "timestamp": NaN}`)
	assert.Equal(t, "…`\"timestamp\": NaN}`", excerpt(line, len(line)-5))
	assert.Equal(t, `"a\x1bb"`, excerpt([]byte("a\x1bb"), 1), "a control character escaped")
	assert.Equal(t, "\"a`b\"", excerpt([]byte("a`b"), 1), "a backquote inside: a Go string")
}
