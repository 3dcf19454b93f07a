package dataset

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDetectKeyedProblems: a first record that no type accepts, given
// without --custom-dataset-type, is checked as the one type its keys name,
// and its problems are reported at their line and field with AIPerf's
// words and that type. Before, each of these gave only "no loader can
// handle the data format", naming no field.
func TestDetectKeyedProblems(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		record string
		kind   string
		key    string
		field  string
		msg    string
	}{
		{`{"text":"x","output_length":-1}`, TypeSingleTurn, `key "text" names`, "output_length", "expected an integer greater than 0, got -1"},
		{`{"text":"x","output_length":0}`, TypeSingleTurn, `key "text" names`, "output_length", "expected an integer greater than 0, got 0"},
		{`{"text":""}`, TypeSingleTurn, `key "text" names`, "", `at least one modality must be provided: expected a non-empty "text" or "texts"`},
		{`{"texts":[]}`, TypeSingleTurn, `key "texts" names`, "", `at least one modality must be provided: expected a non-empty "text" or "texts"`},
		{`{"turns":[]}`, TypeMultiTurn, `key "turns" names`, "turns", "at least one turn must be provided"},
		{`{"input_length":-5}`, TypeMooncakeTrace, `key "input_length" names`, "input_length", "expected an integer from 1 to 16777216, got -5"},
		{`{"chat_id":1,"parent_chat_id":-1,"timestamp":1,"input_length":5,"output_length":0}`, TypeBailianTrace,
			`keys "chat_id", "parent_chat_id" name`, "output_length", "expected an integer from 1 to 16777216, got 0"},
	}
	for i, c := range cases {
		t.Run(c.record, func(t *testing.T) {
			path := filepath.Join(dir, c.kind+string(rune('a'+i))+".jsonl")
			require.NoError(t, os.WriteFile(path, []byte("\n"+c.record+"\n"+c.record+"\n"), 0o644))
			want := &LineError{Path: path, Line: 2, Field: c.field, Msg: c.msg}
			for _, detect := range []func() error{
				func() error { _, err := Open(context.Background(), o200k(t), Options{InputFile: path}); return err },
				func() error { _, err := Detect(path, ""); return err },
			} {
				err := detect()
				require.Error(t, err)
				assert.Equal(t, []*LineError{want}, lineErrors(err), "the first record's one problem, placed")
				assert.Equal(t, "detect the record type (or give --custom-dataset-type): no loader can handle the data format; "+
					"read as "+c.kind+", the one type its "+c.key+": "+want.Error(), err.Error())
			}
			_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: c.kind})
			require.Error(t, err)
			assert.Contains(t, err.Error(), want.Error(), "the problem the type given names")
		})
	}

	path := filepath.Join(dir, "two.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"text":"","output_length":0}`), 0o644))
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path})
	require.Error(t, err)
	assert.Equal(t, "detect the record type (or give --custom-dataset-type): no loader can handle the data format; "+
		`read as single_turn, the one type its key "text" names: 2 problems:`+"\n"+
		path+`:1: at least one modality must be provided: expected a non-empty "text" or "texts"`+"\n"+
		path+":1: output_length: expected an integer greater than 0, got 0", err.Error())

	path = filepath.Join(dir, "col.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"text": 5}`), 0o644))
	_, err = Open(context.Background(), o200k(t), Options{InputFile: path})
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":1:10: text: expected a string, got a JSON number", "a type error keeps its column")
}

// TestDetectKeysUnnamed: a first record that no type accepts and whose keys
// name no type, or more than one, keeps AIPerf's generic message.
func TestDetectKeysUnnamed(t *testing.T) {
	dir := t.TempDir()
	for i, record := range []string{
		`{"foo": 1}`,                            // no type's keys
		`{"text": "", "input_length": -1}`,      // single_turn's and mooncake_trace's
		`{"chat_id": 1, "text": ""}`,            // bailian_trace's and single_turn's
		`{"turns": [], "text": ""}`,             // multi_turn's and single_turn's
		`{"messages": "not a list"}`,            // raw_payload's or mooncake_trace's
		`{"output_length": -1, "timestamp": 1}`, // keys several types read, none names
	} {
		path := filepath.Join(dir, string(rune('a'+i))+".jsonl")
		require.NoError(t, os.WriteFile(path, []byte(record), 0o644))
		_, err := Open(context.Background(), o200k(t), Options{InputFile: path})
		require.Error(t, err, record)
		assert.Equal(t, "detect the record type (or give --custom-dataset-type): "+path+
			":1: no loader can handle the data format: specify --custom-dataset-type explicitly", err.Error(), record)
	}
}

// TestKeyedType: the type a record's keys name, and the keys that name it.
func TestKeyedType(t *testing.T) {
	cases := []struct {
		record string
		kind   string
		marks  []string
	}{
		{`{"text": "x"}`, TypeSingleTurn, []string{"text"}},
		{`{"texts": ["a"], "image": "a.png", "timestamp": 1}`, TypeSingleTurn, []string{"texts", "image"}},
		{`{"turns": [], "session_id": "s"}`, TypeMultiTurn, []string{"turns"}},
		{`{"input_length": 5, "hash_ids": [1]}`, TypeMooncakeTrace, []string{"input_length", "hash_ids"}},
		{`{"text_input": "x"}`, TypeMooncakeTrace, []string{"text_input"}},
		{`{"chat_id": 1, "input_length": 5, "hash_ids": [1]}`, TypeBailianTrace, []string{"chat_id"}},
		{`{"captureData": {}}`, TypeSageMakerCapture, []string{"captureData"}},
		{`{"messages": []}`, "", nil},
		{`{"text": "x", "turns": []}`, "", nil},
		{`{"chat_id": 1, "text_input": "x"}`, "", nil},
		{`[1]`, "", nil},
	}
	for _, c := range cases {
		kind, marks := keyedType([]byte(c.record))
		assert.Equal(t, c.kind, kind, c.record)
		assert.Equal(t, c.marks, marks, c.record)
	}
}

// TestDetectTestdata: every type in testdata is still detected from its
// file, the key-based reading applying only to a record no type accepts.
func TestDetectTestdata(t *testing.T) {
	cases := map[string]string{
		"testdata/files/single_turn.jsonl":       TypeSingleTurn,
		"testdata/files/multi_turn.jsonl":        TypeMultiTurn,
		"testdata/files/random_pool.jsonl":       TypeRandomPool,
		"testdata/files/random_pool_dir":         TypeRandomPool,
		"testdata/files/mooncake_sessions.jsonl": TypeMooncakeTrace,
		head200:                                  TypeMooncakeTrace,
		"testdata/files/bailian.jsonl":           TypeBailianTrace,
		"testdata/files/sagemaker.jsonl":         TypeSageMakerCapture,
		"testdata/files/burstgpt.csv":            TypeBurstGPTTrace,
		"testdata/files/inputs.json":             TypeInputsJSON,
		"testdata/files/baseten.parquet":         TypeBasetenTrace,
		"testdata/files/raw_payload_dir":         TypeRawPayload,
		"testdata/files/weka":                    TypeWekaTrace,
	}
	for path, want := range cases {
		got, err := Detect(path, "")
		require.NoError(t, err, path)
		assert.Equal(t, want, got.Type, path)
	}
	_, err := Detect("testdata/files/raw_payload.jsonl", "")
	assert.ErrorContains(t, err, "multiple loaders can handle the data format: mooncake_trace and raw_payload",
		"a body with messages is both, as in AIPerf")
	_, err = Detect("testdata/files/speed_bench.jsonl", "")
	assert.ErrorContains(t, err, "speed_bench.jsonl:1: a SPEED-Bench row (question_id, category, messages): give --custom-dataset-type speed_bench_<config>",
		"its type says which rows to send")
}
