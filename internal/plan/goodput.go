package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// SLO is one of AIPerf's --goodput objectives: a record metric's tag and
// its threshold in the metric's display unit (ms for latencies).
type SLO struct {
	Tag   string
	Value float64
}

// GoodputTags are the record metrics an SLO can name: the ones with one
// value per request.
var GoodputTags = []string{
	"time_to_first_token", "time_to_second_token", "time_to_first_output_token", "request_latency",
	"inter_token_latency", "output_token_throughput_per_user", "output_sequence_length", "input_sequence_length",
	"output_token_count", "reasoning_token_count",
}

// ParseGoodput reads AIPerf's --goodput syntax: "tag:value" pairs
// separated by spaces (or commas), e.g. "time_to_first_token:200
// inter_token_latency:20". Each tag appears once.
func ParseGoodput(s string) ([]SLO, error) {
	var out []SLO
	for _, pair := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		tag, val, ok := strings.Cut(pair, ":")
		if !ok || tag == "" || val == "" {
			return nil, fmt.Errorf("%q is not tag:value (e.g. time_to_first_token:200)", pair)
		}
		if !slices.Contains(GoodputTags, tag) {
			return nil, fmt.Errorf("unknown metric %q: use one of %s", tag, strings.Join(GoodputTags, ", "))
		}
		x, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return nil, fmt.Errorf("%s: threshold %q is not a finite number ≥ 0", tag, val)
		}
		if slices.ContainsFunc(out, func(o SLO) bool { return o.Tag == tag }) {
			return nil, fmt.Errorf("%s is given twice", tag)
		}
		out = append(out, SLO{tag, x})
	}
	if len(out) == 0 && strings.TrimSpace(s) != "" {
		return nil, fmt.Errorf("no objective in %q", s)
	}
	return out, nil
}

// goodput checks --goodput.
func (v *validator) goodput(p *Profile) {
	if p.Goodput == "" {
		return
	}
	if _, err := ParseGoodput(p.Goodput); err != nil {
		v.add("goodput", err.Error())
	}
}
