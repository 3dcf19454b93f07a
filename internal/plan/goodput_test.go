package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --goodput takes AIPerf's "tag:value tag:value" and names what is wrong.
func TestGoodputOption(t *testing.T) {
	slos, err := ParseGoodput("time_to_first_token:200 inter_token_latency:20.5")
	require.NoError(t, err)
	assert.Equal(t, []SLO{{"time_to_first_token", 200}, {"inter_token_latency", 20.5}}, slos)
	for in, want := range map[string]string{
		"ttft:200":                                    `unknown metric "ttft"`,
		"time_to_first_token":                         "is not tag:value",
		"time_to_first_token:fast":                    `threshold "fast" is not a finite number`,
		"time_to_first_token:-1":                      "≥ 0",
		"time_to_first_token:1 time_to_first_token:2": "time_to_first_token is given twice",
	} {
		p := valid()
		p.Goodput = in
		err := p.Check()
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), "goodput", in)
		assert.Contains(t, err.Error(), want, in)
	}
}

// --goodput takes every per-request metric AIPerf's does (any record metric
// aiperf computes), refuses the ones no successful request has one value
// of, and proposes the nearest tag for a misspelt one.
func TestGoodputTakesEveryRecordMetric(t *testing.T) {
	slos, err := ParseGoodput("prefill_throughput_per_user:1000 e2e_output_token_throughput:50 output_sequence_length:100 " +
		"usage_prompt_cache_read_tokens:10 http_req_waiting:5 spec_decode_acceptance_length:1.5")
	require.NoError(t, err)
	assert.Len(t, slos, 6)
	for in, want := range map[string]string{
		"prefill_throughput_per_usr:1": `unknown metric "prefill_throughput_per_usr" (did you mean "prefill_throughput_per_user"?)`,
		"ttft:200":                     `unknown metric "ttft" (did you mean "time_to_first_token"?)`,
		"tokens_per_second:5":          `unknown metric "tokens_per_second": an objective names a per-request metric, e.g.`,
		"inter_chunk_latency:5":        "inter_chunk_latency has a value per gap between a stream's responses",
		"error_isl:100":                "error_isl is measured on failed requests only",
		"request_throughput:5":         "request_throughput is not a metric of each request",
	} {
		p := valid()
		p.Goodput = in
		err := p.Check()
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

// An objective on a streaming-only metric without --streaming is refused
// before traffic: no request would have the metric, so none would be good.
func TestGoodputStreamingOnlyNeedsStreaming(t *testing.T) {
	p := valid()
	p.EndpointType, p.Streaming = EndpointChat, false
	p.Goodput = "inter_token_latency:5 request_latency:100"
	err := p.Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--goodput inter_token_latency reads a streaming-only metric")
	assert.Contains(t, err.Error(), "add --streaming")
	p.Goodput = "request_latency:100 output_sequence_length:5"
	assert.NoError(t, p.Check())
	p.Goodput, p.Streaming = "inter_token_latency:5 time_to_first_token:9", true
	assert.NoError(t, p.Check())
}
