package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// turnRecord is a single_turn line, one turn of a multi_turn line and (its
// text fields) a random_pool line: AIPerf's SingleTurn schema. Unknown keys
// are ignored, as AIPerf's models allow them.
type turnRecord struct {
	Type         *string         `json:"type"`
	Text         *string         `json:"text"`
	Texts        json.RawMessage `json:"texts"`
	Image        json.RawMessage `json:"image"`
	Images       json.RawMessage `json:"images"`
	ImageUUIDs   json.RawMessage `json:"image_uuids"`
	Audio        json.RawMessage `json:"audio"`
	Audios       json.RawMessage `json:"audios"`
	Video        json.RawMessage `json:"video"`
	Videos       json.RawMessage `json:"videos"`
	Timestamp    *float64        `json:"timestamp"`
	Delay        *float64        `json:"delay"`
	Role         *string         `json:"role"`
	SessionID    *string         `json:"session_id"`
	OutputLength *int64          `json:"output_length"`
	Extra        json.RawMessage `json:"extra"`
}

// multiTurnRecord is a multi_turn line.
type multiTurnRecord struct {
	Type      *string      `json:"type"`
	SessionID *string      `json:"session_id"`
	Turns     []turnRecord `json:"turns"`
}

// mooncakeRecord is a mooncake_trace line.
type mooncakeRecord struct {
	Type         *string         `json:"type"`
	InputLength  *int64          `json:"input_length"`
	TextInput    *string         `json:"text_input"`
	Messages     json.RawMessage `json:"messages"`
	Payload      json.RawMessage `json:"payload"`
	Tools        json.RawMessage `json:"tools"`
	MessageMode  *string         `json:"message_mode"`
	ContextMode  *string         `json:"context_mode"`
	OutputLength *int64          `json:"output_length"`
	HashIDs      *[]int64        `json:"hash_ids"`
	Timestamp    *float64        `json:"timestamp"`
	Delay        *float64        `json:"delay"`
	SessionID    *string         `json:"session_id"`
	Extra        json.RawMessage `json:"extra"`
}

// decodeLine decodes one JSON object into v. A syntax or type error is
// returned as a problem at its column, quoting only a short excerpt.
func decodeLine(line []byte, v any) []problem {
	if trimmed := bytes.TrimLeft(line, " \t\r\n"); jsonKindOf(trimmed) != "an object" {
		off := len(line) - len(trimmed)
		return []problem{{Col: column(line, off), at: off + 1, Msg: "expected a JSON object, got " + jsonKindOf(trimmed)}}
	}
	err := json.Unmarshal(line, v)
	if err == nil {
		return nil
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		off := int(syntax.Offset) - 1 // the offending byte
		return []problem{{Col: column(line, off), at: off + 1, Msg: fmt.Sprintf("invalid JSON near %s: %s", excerpt(line, off), syntax.Error())}}
	case errors.As(err, &typ):
		got := typ.Value
		if len(got) > 30 {
			got, _, _ = strings.Cut(got, " ")
		}
		off := valueStart(line, int(typ.Offset))
		return []problem{{Col: column(line, off), at: off + 1, Field: typ.Field,
			Msg: fmt.Sprintf("expected %s, got %s", goKind(typ.Type.Kind().String()), jsonWord(got))}}
	}
	return []problem{{Msg: "invalid JSON: " + err.Error()}}
}

// valueStart finds where the JSON value that a type error reports starts:
// encoding/json gives the offset just after a literal, or just after the
// bracket that opens an object or list.
func valueStart(line []byte, off int) int {
	off = min(off, len(line))
	if off <= 0 {
		return 0
	}
	switch c := line[off-1]; {
	case c == '{' || c == '[':
		return off - 1
	case c == '"':
		for i := off - 2; i >= 0; i-- {
			if line[i] != '"' {
				continue
			}
			escapes := 0
			for k := i - 1; k >= 0 && line[k] == '\\'; k-- {
				escapes++
			}
			if escapes%2 == 0 {
				return i
			}
		}
		return 0
	}
	i := off
	for i > 0 && bytes.IndexByte([]byte("0123456789.eE+-truefalsn"), line[i-1]) >= 0 {
		i--
	}
	return i
}

// goKind describes a Go kind as the JSON value it decodes.
func goKind(kind string) string {
	switch kind {
	case "int64", "int":
		return "an integer"
	case "float64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "struct", "map":
		return "an object"
	}
	return kind
}

// jsonWord names a JSON value as encoding/json reports it ("string",
// "number 0.5").
func jsonWord(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "array":
		return "a list"
	case "object", "string", "number", "bool":
		return "a JSON " + v
	}
	return v
}

// jsonKindOf names the kind of the JSON value b starts with.
func jsonKindOf(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch c := b[0]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "a list"
	case c == '"':
		return "a string"
	case bytes.HasPrefix(b, []byte("true")) || bytes.HasPrefix(b, []byte("false")):
		return "true or false"
	case bytes.HasPrefix(b, []byte("null")):
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	}
	return "something that is not JSON"
}

// isSet reports whether a raw JSON field is present and not null.
func isSet(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// truthy reports whether a raw JSON value is set and not empty or false,
// the way AIPerf's checks test fields ("" and [] count as absent).
func truthy(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", `""`, "[]", "{}", "false", "0":
		return false
	}
	return true
}

// Bounds of a trace's times, in ms. A delay is a think time, bounded as
// --conversation-turn-delay-mean is (a day); a timestamp must be an exact
// integer in a float64, and no later than MaxScheduleMs after the
// schedule's zero (schedule).
const (
	MaxDelayMs     = 24 * 60 * 60 * 1000.0
	MaxTimestampMs = 1 << 53
	// MaxScheduleMs is the longest a replay may last: a year, the longest
	// --benchmark-duration.
	MaxScheduleMs = 365 * MaxDelayMs
)

// checkTime checks a timestamp: a finite number of ms, 0 to MaxTimestampMs.
func checkTime(field string, v *float64) []problem {
	return checkMs(field, v, MaxTimestampMs, "")
}

// checkDelay checks a delay: a finite number of ms, 0 to MaxDelayMs.
func checkDelay(field string, v *float64) []problem {
	return checkMs(field, v, MaxDelayMs, " (a day)")
}

func checkMs(field string, v *float64, hi float64, what string) []problem {
	switch {
	case v == nil:
	case *v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0):
		return []problem{problemf(field, "expected a number of milliseconds ≥ 0, got %v", *v)}
	case *v > hi:
		return []problem{problemf(field, "expected at most %.0f milliseconds%s, got %v", hi, what, *v)}
	}
	return nil
}

// checkObject checks that a raw field, when set, is a JSON object.
func checkObject(field string, raw json.RawMessage) []problem {
	if isSet(raw) && jsonKindOf(raw) != "an object" {
		return []problem{problemf(field, "expected an object, got %s", jsonKindOf(raw))}
	}
	return nil
}

// texts returns the text inputs of a turn: text, or every string of texts
// (a list of strings, or of {"name", "contents": [strings]} objects).
func (t *turnRecord) texts(field string) ([]string, []problem) {
	if t.Text != nil && *t.Text != "" {
		return []string{*t.Text}, nil
	}
	if !isSet(t.Texts) {
		return nil, nil
	}
	out, err := stringsOrNamed(t.Texts)
	if err != nil {
		return nil, []problem{problemf(field+"texts", `expected a list of strings or of {"name": …, "contents": [strings]} objects`)}
	}
	return out, nil
}

func nonEmpty(list []string) []string {
	out := list[:0:0]
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// check validates a turn as AIPerf's SingleTurn model does. field prefixes
// field names ("" for a single_turn line, "turns[2]." in a multi_turn
// line); pool drops the fields random_pool lines do not have. fm loads
// and checks the turn's media (nil: their shape only).
func (t *turnRecord) check(field string, pool bool, fm *fileMedia) []problem {
	var ps []problem
	if t.Type != nil && *t.Type != TypeSingleTurn && field != "" {
		ps = append(ps, problemf(field+"type", "expected %q for a turn, got %q", TypeSingleTurn, *t.Type))
	}
	if t.Text != nil && *t.Text != "" && truthy(t.Texts) {
		ps = append(ps, problemf(field+"text", "text and texts cannot be set together"))
	}
	texts, tp := t.texts(field)
	ps = append(ps, tp...)
	refs, mps := t.mediaRefs(field, pool)
	ps = append(append(ps, mps...), fm.check(refs)...)
	if len(texts) == 0 && len(tp) == 0 && !slices.ContainsFunc(refs, func(r mediaRef) bool { return r.value != "" }) && len(mps) == 0 {
		ps = append(ps, problemf(strings.TrimSuffix(field, "."), `at least one modality must be provided: expected a non-empty "text" or "texts"`))
	}
	if !pool {
		if t.Timestamp != nil && *t.Timestamp != 0 && t.Delay != nil && *t.Delay != 0 {
			ps = append(ps, problemf(field+"timestamp", "timestamp and delay cannot be set together"))
		}
		ps = append(ps, checkTime(field+"timestamp", t.Timestamp)...)
		ps = append(ps, checkDelay(field+"delay", t.Delay)...)
		if t.OutputLength != nil && *t.OutputLength < 1 {
			ps = append(ps, problemf(field+"output_length", "expected an integer greater than 0, got %d", *t.OutputLength))
		}
		ps = append(ps, checkObject(field+"extra", t.Extra)...)
		ps = append(ps, checkExtraPrompt(field+"extra", t.Extra)...)
	}
	return ps
}

// hoistable reports whether a multi_turn line's leading turn becomes the
// conversation's system message: a text-only system turn with no timing,
// output length or extra.
func (t *turnRecord) hoistable() bool {
	return t.Role != nil && *t.Role == "system" && t.Timestamp == nil && t.Delay == nil &&
		t.OutputLength == nil && !isSet(t.Extra)
}

// checkType reports a record whose "type" is not the file's.
func checkType(typ *string, want string) []problem {
	if typ != nil && *typ != want {
		return []problem{problemf("type", "a %q record in a %s file: one file holds one record type", *typ, want)}
	}
	return nil
}

// messages validation: a non-empty list of objects, each with a "role".
func checkMessages(field string, raw json.RawMessage) []problem {
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return []problem{problemf(field, "expected a list of message objects, got %s", jsonKindOf(raw))}
	}
	if len(msgs) == 0 {
		return []problem{problemf(field, "'messages' must be a non-empty list")}
	}
	for i, m := range msgs {
		if _, ok := m["role"]; !ok || m == nil {
			return []problem{problemf(fmt.Sprintf("%s[%d]", field, i), "each message must have a 'role' key")}
		}
	}
	return nil
}
