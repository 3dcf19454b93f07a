package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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

// jsonProblem words a JSON decoding error: a field of the wrong type is
// named with the type it had and the one expected; any other error is
// otherwise.
func jsonProblem(err error, otherwise string) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s is a JSON %s, not a %s", te.Field, te.Value, te.Type)
	}
	return otherwise
}
