package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// SLO is one of AIPerf's --goodput objectives: a record metric's tag and
// its threshold in the metric's display unit (ms for latencies).
type SLO struct {
	Tag   string
	Value float64
}

// GoodputTags are the metrics an SLO can name, as AIPerf's --goodput takes
// any record metric: every per-request metric aiperf computes
// (metrics.GoodputTags), each judged in AIPerf's direction
// (metrics.LargerIsBetter).
var GoodputTags = metrics.GoodputTags()

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
		if err := goodputTag(tag); err != nil {
			return nil, err
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

// goodputTag checks that an SLO can name tag: a metric with one value per
// successful request (GoodputTags), naming a misspelt one's nearest.
func goodputTag(tag string) error {
	switch {
	case slices.Contains(GoodputTags, tag):
		return nil
	case tag == metrics.TagICL:
		return fmt.Errorf("%s has a value per gap between a stream's responses, not one per request: "+
			"an objective needs one (inter_token_latency is the request's mean gap)", tag)
	case tag == metrics.TagErrorISL:
		return fmt.Errorf("%s is measured on failed requests only, and only a successful request can be good "+
			"(input_sequence_length is a successful request's)", tag)
	case metrics.Known(tag):
		return fmt.Errorf("%s is not a metric of each request (the run's, or derived from the run's): an objective "+
			"names a per-request metric, e.g. time_to_first_token, inter_token_latency, request_latency", tag)
	}
	hint := Suggest(tag, GoodputTags)
	if full, ok := shortGoodputNames[strings.ToLower(tag)]; ok {
		hint = fmt.Sprintf(" (did you mean %q?)", full)
	}
	if hint == "" {
		hint = ": an objective names a per-request metric, e.g. time_to_first_token, inter_token_latency, " +
			"request_latency, output_token_throughput_per_user (docs/metrics.md lists them)"
	}
	return fmt.Errorf("unknown metric %q%s", tag, hint)
}

// shortGoodputNames are the short names an objective is often written
// with (AIPerf's short headers, vLLM's --goodput names), and the tag each
// stands for: neither AIPerf nor aiperf takes them, but the refusal names
// the tag.
var shortGoodputNames = map[string]string{
	"ttft": metrics.TagTTFT, "ttst": metrics.TagTTST, "ttfo": metrics.TagTTFO, "itl": metrics.TagITL,
	"tpot": metrics.TagITL, "e2el": metrics.TagRequestLatency, "latency": metrics.TagRequestLatency,
	"osl": metrics.TagOSL, "isl": metrics.TagISL,
}

// goodput checks --goodput.
func (v *validator) goodput(p *Profile) {
	if p.Goodput == "" {
		return
	}
	slos, err := ParseGoodput(p.Goodput)
	if err != nil {
		v.add("goodput", err.Error())
		return
	}
	if p.Streams() {
		return
	}
	var only []string
	for _, o := range slos {
		if metrics.StreamingOnly(o.Tag) {
			only = append(only, o.Tag)
		}
	}
	if len(only) > 0 {
		fix := "add --streaming"
		if p.Streaming { // the endpoint type does not stream
			fix = fmt.Sprintf("the %s endpoint does not stream: use a streaming endpoint type with --streaming", p.EndpointType)
		}
		v.add("goodput", fmt.Sprintf("%s reads a streaming-only metric, which a run without streaming does not measure "+
			"(every request would fail the objective): %s", strings.Join(only, ", "), fix))
	}
}
