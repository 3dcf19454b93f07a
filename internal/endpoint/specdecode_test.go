package endpoint

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// specObject is vLLM's per-request acceptance: 8 verify steps accepting
// 0, 1, 2, 2, 3, 3, 3 and 4 draft tokens of 4 (18 of 32), as AIPerf's
// reference fixture.
const specObject = `{"mean_acceptance_length":3.25,"draft_acceptance_rate":0.5625,"acceptance_histogram":[1,1,2,3,1],` +
	`"num_accepted_draft_tokens":18,"num_draft_tokens":32,"num_spec_steps":8,"num_spec_tokens":4}`

func specWant() *metrics.SpecDecode {
	return &metrics.SpecDecode{Engine: "vllm", MeanAcceptanceLength: 3.25, DraftAcceptanceRate: 0.5625,
		NumAcceptedDraftTokens: 18, NumDraftTokens: 32, NumSpecSteps: 8, NumSpecTokens: ptr(4),
		AcceptanceHistogram: map[int]int{0: 1, 1: 1, 2: 2, 3: 3, 4: 1}}
}

// TestSpecDecodeFromTheResponseRoot: vLLM's metrics.speculative_decoding
// is read off a stream's trailing usage frame and off a whole body, chat
// and completions alike.
func TestSpecDecodeFromTheResponseRoot(t *testing.T) {
	srv := newRawServer(t, respond(chunked(200, "text/event-stream", tokA,
		`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":26},"metrics":{"speculative_decoding":`+specObject+"}}\n\n", done)))
	res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
	require.Nil(t, res.Err)
	assert.Equal(t, specWant(), res.SpecDecode)

	body := `{"object":"text_completion","choices":[{"index":0,"text":"AB","finish_reason":"length"}],` +
		`"usage":{"prompt_tokens":5,"completion_tokens":26},"metrics":{"ttft":0.1,"speculative_decoding":` + specObject + `}}`
	srv = newRawServer(t, respond(fixed(200, "application/json", body)))
	res = newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), plan.EndpointCompletions, false))
	require.Nil(t, res.Err)
	assert.Equal(t, specWant(), res.SpecDecode)

	srv = newRawServer(t, respond(chunked(200, "text/event-stream", tokA, done)))
	res = newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
	require.Nil(t, res.Err)
	assert.Nil(t, res.SpecDecode, "no acceptance reported")
}

// TestSpecDecodeShapes: the histogram dense or keyed, the detailed level's
// per-step arrays, a request that ran no verify step; anything that does
// not add up is no acceptance, and never a failed request.
func TestSpecDecodeShapes(t *testing.T) {
	tests := []struct {
		name, edit string // edit replaces a part of specObject: "old=>new"
		ok         bool
	}{
		{"dense", "", true},
		{"keyed", `[1,1,2,3,1]=>{"0":1,"1":1,"2":2,"3":3,"4":1}`, true},
		{"detailed", `"num_spec_tokens":4=>"num_spec_tokens":4,"per_step_accepted":[0,1,2,2,3,3,3,4],"per_step_drafted":[4,4,4,4,4,4,4,4]`, true},
		{"zero steps", `"acceptance_histogram":[1,1,2,3,1],"num_accepted_draft_tokens":18,"num_draft_tokens":32,"num_spec_steps":8=>` +
			`"acceptance_histogram":[0,0,0,0,0],"num_accepted_draft_tokens":0,"num_draft_tokens":0,"num_spec_steps":0`, true},
		{"steps do not add up", `"num_spec_steps":8=>"num_spec_steps":9`, false},
		{"accepted do not add up", `[1,1,2,3,1]=>[2,0,2,3,1]`, false},
		{"dense width is not k+1", `[1,1,2,3,1]=>[1,1,2,3,1,0]`, false},
		{"more accepted than drafted", `"num_draft_tokens":32=>"num_draft_tokens":17`, false},
		{"a rate above 1", `0.5625=>1.5625`, false},
		{"a fractional count", `"num_spec_steps":8=>"num_spec_steps":8.5`, false},
		{"a negative bucket", `[1,1,2,3,1]=>[1,1,2,3,-1]`, false},
		{"per-step arrays that do not reconcile", `"num_spec_tokens":4=>"num_spec_tokens":4,"per_step_accepted":[0,1,2,2,3,3,3,5],"per_step_drafted":[4,4,4,4,4,4,4,4]`, false},
		{"not an object", `{"mean_acceptance_length"=>["mean_acceptance_length"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := specObject
			if tc.edit != "" {
				old, repl, _ := strings.Cut(tc.edit, "=>")
				require.Contains(t, obj, old)
				obj = strings.Replace(obj, old, repl, 1)
			}
			srv := newRawServer(t, respond(chunked(200, "text/event-stream", tokA,
				`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":26},"metrics":{"speculative_decoding":`+obj+"}}\n\n", done)))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
			require.Nil(t, res.Err, "a bad acceptance object does not fail the request")
			if !tc.ok {
				assert.Nil(t, res.SpecDecode)
				return
			}
			require.NotNil(t, res.SpecDecode)
			assert.Equal(t, 18*min(res.SpecDecode.NumSpecSteps, 1), res.SpecDecode.NumAcceptedDraftTokens)
		})
	}
}
