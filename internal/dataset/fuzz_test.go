package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadFile feeds arbitrary file bytes to every loader: none may panic,
// every problem must be placed in the file, no error may echo more than a
// short excerpt of a line, and every conversation of a file that opens
// must read back.
func FuzzLoadFile(f *testing.F) {
	for _, path := range []string{"testdata/files/single_turn.jsonl", "testdata/files/multi_turn.jsonl",
		"testdata/files/mooncake_sessions.jsonl", "testdata/files/random_pool.jsonl", "testdata/files/sharegpt.json",
		"testdata/files/bad/mooncake.jsonl", "testdata/files/bad/sharegpt.json", "testdata/files/bailian.jsonl",
		"testdata/files/bad/bailian.jsonl", "testdata/files/inputs.json", "testdata/files/bad/inputs.json",
		"testdata/files/burstgpt.csv", "testdata/files/bad/burstgpt.csv", "testdata/files/raw_payload.jsonl",
		"testdata/files/bad/raw_payload.jsonl", "testdata/files/sagemaker.jsonl", "testdata/files/bad/sagemaker.jsonl",
		"testdata/files/sharegpt.jsonl", "testdata/files/aimo.jsonl", "testdata/files/bad/aimo.jsonl",
		"testdata/files/instruct_coder.json"} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	tok := o200k(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "in.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, o := range []Options{
			{InputFile: path},
			{InputFile: path, CustomType: TypeSingleTurn},
			{InputFile: path, CustomType: TypeMultiTurn, FixedSchedule: true},
			{InputFile: path, CustomType: TypeRandomPool, Entries: 5},
			{InputFile: path, CustomType: TypeMooncakeTrace, BlockSize: 4, AutoOffset: true, EndOffsetMs: ptr(1e6)},
			{InputFile: path, PublicDataset: PublicShareGPT, OSLMean: 5},
			{InputFile: path, PublicDataset: PublicAIMO},
			{InputFile: path, PublicDataset: PublicInstructCoder, OSLMean: 5},
			{InputFile: path, CustomType: TypeBailianTrace, FixedSchedule: true},
			{InputFile: path, CustomType: TypeInputsJSON},
			{InputFile: path, CustomType: TypeBurstGPTTrace, FixedSchedule: true},
			{InputFile: path, CustomType: TypeRawPayload},
			{InputFile: path, CustomType: TypeSageMakerCapture, FixedSchedule: true, EndOffsetMs: ptr(1e6)},
		} {
			d, err := Open(context.Background(), tok, o)
			if err != nil {
				checkFuzzError(t, err, path, lines)
				continue
			}
			if d.Len() < 1 {
				t.Fatalf("%+v: an open dataset has no conversations", o)
			}
			if syntheticTokens(data) <= 1_000_000 {
				for i := range min(d.Len(), 50) {
					if _, err := d.Conversation(i); err != nil {
						t.Fatalf("%+v: conversation %d: %v", o, i, err)
					}
				}
			}
			d.Close()
		}
	})
}

func checkFuzzError(t *testing.T, err error, path string, lines int) {
	t.Helper()
	les := lineErrors(err)
	if len(les) == 0 && !strings.Contains(err.Error(), "no loader can handle") {
		t.Fatalf("an error about the file is not a LineError: %v", err)
	}
	for _, le := range les {
		if le.Path != path || le.Line < 0 || le.Line > lines || le.Col < 0 {
			t.Fatalf("misplaced problem (file has %d lines): %#v", lines, le)
		}
		if len(le.Msg) > 400 {
			t.Fatalf("problem message of %d bytes: %.100s…", len(le.Msg), le.Msg)
		}
	}
}

// syntheticTokens sums the input_length of a trace's lines, so that the
// fuzzer does not spend its time writing huge prompts.
func syntheticTokens(data []byte) int64 {
	var sum int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		var r struct {
			InputLength int64 `json:"input_length"`
		}
		_ = json.Unmarshal(sc.Bytes(), &r)
		sum += max(r.InputLength, 0)
	}
	return sum
}

// traceFormats frame a fuzzed line in a trace of each format: a valid line
// before it and one after it that continues the first's session.
var traceFormats = []struct {
	before, after string
	o             Options
}{
	{`{"session_id": "s", "timestamp": 0, "input_length": 8, "hash_ids": [1, 2]}`, `{"session_id": "s", "delay": 5, "input_length": 8}`,
		Options{CustomType: TypeMooncakeTrace, BlockSize: 4, FixedSchedule: true, AutoOffset: true}},
	{`{"text": "a", "session_id": "s", "timestamp": 1}`, `{"text": "c", "session_id": "s", "timestamp": 3}`,
		Options{CustomType: TypeSingleTurn, FixedSchedule: true}},
	{`{"session_id": "s", "turns": [{"text": "a", "timestamp": 1}]}`, `{"session_id": "s", "turns": [{"text": "c", "timestamp": 9}]}`,
		Options{CustomType: TypeMultiTurn, FixedSchedule: true, StartOffsetMs: ptr(0.0)}},
	{`{"text": "a"}`, `{"text": "c"}`, Options{CustomType: TypeRandomPool, Entries: 3}},
	{`{"chat_id": 1, "timestamp": 0.5, "input_length": 20, "output_length": 3, "hash_ids": [1, 2]}`,
		`{"chat_id": 3, "parent_chat_id": 1, "timestamp": 9, "input_length": 40, "output_length": 3, "turn": 3}`,
		Options{CustomType: TypeBailianTrace, FixedSchedule: true}},
	{"Timestamp,Model,Request tokens,Response tokens", "1.5,m,20,3", Options{CustomType: TypeBurstGPTTrace, FixedSchedule: true}},
	{`{"messages": [{"role": "user", "content": "a"}]}`, `{"messages": [], "model": "m"}`, Options{CustomType: TypeRawPayload}},
	{`{"captureData": {"endpointInput": {"data": "{\"messages\": [{\"role\": \"user\"}]}", "encoding": "JSON"}}, "eventMetadata": {"inferenceTime": "2026-04-29T00:03:18Z"}}`,
		`{"captureData": {"endpointInput": {"data": "eyJtZXNzYWdlcyI6W3sicm9sZSI6InVzZXIifV19"}}, "eventMetadata": {"inferenceTime": "2026-04-29T00:03:19Z"}}`,
		Options{CustomType: TypeSageMakerCapture, FixedSchedule: true}},
}

// FuzzTraceLine puts arbitrary bytes as the middle line of a trace of each
// format and opens it: nothing may panic; a refused trace names its file
// and a line of it, in a short message; an opened one reads back, every
// send time and delay finite and within the horizon (MaxScheduleMs,
// MaxDelayMs). The seeds are the lines of testdata/files and a few hostile
// ones.
func FuzzTraceLine(f *testing.F) {
	for _, path := range []string{"testdata/files/single_turn.jsonl", "testdata/files/multi_turn.jsonl",
		"testdata/files/mooncake_sessions.jsonl", "testdata/files/random_pool.jsonl", "testdata/files/bad/mooncake.jsonl",
		"testdata/files/bailian.jsonl", "testdata/files/bad/bailian.jsonl", "testdata/files/bad/burstgpt.csv",
		"testdata/files/sagemaker.jsonl", "testdata/files/bad/sagemaker.jsonl"} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			f.Add(line)
		}
	}
	for _, s := range []string{`{"session_id": "s", "timestamp": 1e300, "input_length": 1}`, `{"session_id": "s", "delay": 1e300, "text_input": "x"}`,
		`{"session_id": "s", "turns": [{"text": "b", "timestamp": 9007199254740993}]}`, `{"text": "b", "session_id": "s", "timestamp": -0}`} {
		f.Add(s)
	}
	tok := o200k(f)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\r\n") || syntheticTokens([]byte(line)) > 1_000_000 {
			return // one line, of a prompt the fuzzer can build quickly
		}
		for _, tf := range traceFormats {
			o := tf.o
			o.InputFile = filepath.Join(t.TempDir(), "trace.jsonl")
			if err := os.WriteFile(o.InputFile, []byte(tf.before+"\n"+line+"\n"+tf.after+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := Open(context.Background(), tok, o)
			if err != nil {
				checkFuzzError(t, err, o.InputFile, 4)
				continue
			}
			checkTimes(t, d, o)
			d.Close()
		}
	})
}

// checkTimes reads every conversation of d back and checks its times.
func checkTimes(t *testing.T, d Dataset, o Options) {
	t.Helper()
	inHorizon := func(ms float64) bool { return ms >= 0 && ms <= MaxScheduleMs && !math.IsNaN(ms) }
	for _, s := range d.Schedule() {
		if !inHorizon(s.AtMs) {
			t.Fatalf("%s: a start at %v ms", o.CustomType, s.AtMs)
		}
	}
	for i := range d.Len() {
		c, err := d.Conversation(i)
		if err != nil {
			t.Fatalf("%s: conversation %d: %v", o.CustomType, i, err)
		}
		for _, turn := range c.Turns {
			if turn.HasTimestamp && !inHorizon(turn.TimestampMs) || turn.DelayMs < 0 || turn.DelayMs > MaxDelayMs {
				t.Fatalf("%s: a turn at %v ms after a delay of %v ms", o.CustomType, turn.TimestampMs, turn.DelayMs)
			}
		}
	}
}
