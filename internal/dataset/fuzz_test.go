package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
		"testdata/files/bad/mooncake.jsonl", "testdata/files/bad/sharegpt.json"} {
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
