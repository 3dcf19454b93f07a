package dataset

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// keyedTypes are the record types a first record that no type accepts may be
// read as by its keys, to report what is wrong with it: marks are the keys
// that name the type, fields every key its schema reads. raw_payload has no
// marks: any object with a "messages" list is one.
var keyedTypes = []struct {
	kind   string
	marks  []string
	fields []string
}{
	{TypeSingleTurn, []string{"text", "texts", "image", "images", "image_uuids", "audio", "audios", "video", "videos"}, jsonKeys(turnRecord{})},
	{TypeMultiTurn, []string{"turns"}, jsonKeys(multiTurnRecord{})},
	{TypeMooncakeTrace, []string{"input_length", "hash_ids", "text_input", "payload", "message_mode", "context_mode"}, jsonKeys(mooncakeRecord{})},
	{TypeBailianTrace, []string{"chat_id", "parent_chat_id"}, jsonKeys(bailianRecord{})},
	{TypeSageMakerCapture, []string{"captureData", "eventMetadata"}, jsonKeys(captureRecord{})},
}

// noLoader is AIPerf's words for a first record that no type accepts.
const noLoader = "no loader can handle the data format"

// jsonKeys lists the json tags of a struct's fields.
func jsonKeys(v any) []string {
	t := reflect.TypeOf(v)
	var keys []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// keyedType returns the one record type that a record's keys name, and the
// keys that name it: a type one of whose marks the record has, and whose
// schema reads every mark the record has (so a bailian_trace record, whose
// input_length is also a mooncake_trace mark, is not a mooncake_trace one).
// It returns "" when the keys name no type or more than one.
func keyedType(line []byte) (string, []string) {
	var rec map[string]json.RawMessage
	if json.Unmarshal(line, &rec) != nil {
		return "", nil
	}
	var marks []string
	for _, t := range keyedTypes {
		for _, m := range t.marks {
			if _, ok := rec[m]; ok && !slices.Contains(marks, m) {
				marks = append(marks, m)
			}
		}
	}
	var kind string
	var named []string
	for _, t := range keyedTypes {
		own := slices.DeleteFunc(slices.Clone(marks), func(m string) bool { return !slices.Contains(t.marks, m) })
		if len(own) == 0 || slices.ContainsFunc(marks, func(m string) bool { return !slices.Contains(t.fields, m) }) {
			continue
		}
		if kind != "" {
			return "", nil
		}
		kind, named = t.kind, own
	}
	return kind, named
}

// keyedError is a first record that no type accepts, read as the one type
// its keys name: its problems as that type.
type keyedError struct {
	kind  string
	marks []string
	ps    []problem
}

func (e *keyedError) Error() string {
	return fmt.Sprintf("%s; read as %s, the one type its keys name", noLoader, e.kind)
}

// placeKeyed places a keyedError's problems at line no of path.
func placeKeyed(path string, no int, e *keyedError) error {
	ps := problems{path: path}
	ps.addAll(no, e.ps)
	keys := "key " + strconv.Quote(e.marks[0]) + " names"
	if len(e.marks) > 1 {
		quoted := make([]string, len(e.marks))
		for i, m := range e.marks {
			quoted[i] = strconv.Quote(m)
		}
		keys = "keys " + strings.Join(quoted, ", ") + " name"
	}
	return fmt.Errorf("detect the record type (or give --custom-dataset-type): %s; read as %s, the one type its %s: %w",
		noLoader, e.kind, keys, ps.err())
}
