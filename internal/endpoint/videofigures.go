package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// maxFigure bounds a plausible server-reported video figure: no job takes
// 10^12 seconds nor 10^12 MB.
const maxFigure = 1e12

// videoFigure is a figure of a video job's status, read leniently as
// usageCount is: a value that is not a plausible figure is dropped and
// described, the job still measured.
type videoFigure struct {
	V   float64
	Set bool   // a plausible value was present
	Bad string // why the value was dropped; "" when valid or absent
}

// UnmarshalJSON implements json.Unmarshaler; it never fails. null is
// absent.
func (f *videoFigure) UnmarshalJSON(b []byte) error {
	*f = videoFigure{}
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		return nil
	}
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		f.Bad = "not a number (" + shortValue(s) + ")"
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsInf(v, 0) || math.IsNaN(v):
		f.Bad = "not finite (" + shortValue(s) + ")"
	case v < 0:
		f.Bad = "negative (" + shortValue(s) + ")"
	case v > maxFigure:
		f.Bad = "implausible (" + shortValue(s) + ")"
	default:
		f.V, f.Set = v, true
	}
	return nil
}

// ptr is the figure, nil when absent or dropped.
func (f videoFigure) ptr() *float64 {
	if !f.Set {
		return nil
	}
	v := f.V
	return &v
}

// stats are a completed job's figures, the implausible ones dropped and
// described.
func (j *videoJob) stats() *VideoStats {
	var bad []string
	for _, f := range []struct {
		name string
		v    videoFigure
	}{{"inference_time_s", j.InferenceS}, {"peak_memory_mb", j.PeakMemoryMB}} {
		if f.v.Bad != "" {
			bad = append(bad, f.name+" is "+f.v.Bad)
		}
	}
	return &VideoStats{InferenceS: j.InferenceS.ptr(), PeakMemoryMB: j.PeakMemoryMB.ptr(), Untrusted: strings.Join(bad, "; ")}
}

// decodeObject decodes a body that must be a JSON object into v, and
// says why it is not one of v's shape ("" when it decoded): a field of the
// wrong type is named (jsonProblem).
func decodeObject(b []byte, v any) string {
	if len(b) == 0 || b[0] != '{' {
		return "the body is not a JSON object"
	}
	if err := json.Unmarshal(b, v); err != nil {
		return jsonProblem(err, "the body is not a JSON object")
	}
	return ""
}

// jsonProblem words a JSON decoding error: a field of the wrong type is
// named (its path, as "choices.message") with the JSON type it had and the
// one expected ("choices.message is a JSON string, not an object"); any
// other error is otherwise (and so is none: err is never nil when a body
// was refused).
func jsonProblem(err error, otherwise string) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s is a JSON %s, not %s", te.Field, te.Value, jsonKind(te.Type))
	}
	return otherwise
}

// jsonKind names the JSON type a Go type decodes from, with its article.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a " + t.String()
}
