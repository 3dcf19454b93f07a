package result

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

func TestRunRedacted(t *testing.T) {
	const secret = "sk-run-secret"
	echo := "server said " + secret
	p := plan.NewProfile()
	p.APIKey = secret
	run := &Run{
		Config:       p,
		CLICommand:   "aiperf profile --api-key " + secret,
		Error:        echo,
		ErrorSummary: []metrics.ErrorCount{{Error: metrics.Error{Message: echo}, Count: 1}},
		ControlHooks: []hooks.Call{{Error: echo, Warning: echo}, {Error: "fine"}},
		Audit:        Audit{Warnings: []string{echo}, KVResetDetail: echo},
		Records:      []metrics.Record{{Error: &metrics.Error{Message: echo}}, {ResponseText: &echo}},
	}
	red := run.Redacted(p.Redactor())
	b, err := json.Marshal(red)
	assert.NoError(t, err)
	assert.NotContains(t, string(b), secret)
	assert.Equal(t, "server said "+plan.Redacted, red.Records[0].Error.Message)
	assert.Equal(t, "fine", red.ControlHooks[1].Error)
	assert.Equal(t, "server said "+plan.Redacted, *red.Records[1].ResponseText, "outputs.json's text")

	// The original is untouched: records share nothing that was changed.
	assert.Equal(t, echo, run.Records[0].Error.Message)
	assert.Equal(t, echo, *run.Records[1].ResponseText)
	assert.Equal(t, echo, run.ControlHooks[0].Error)
	assert.Equal(t, secret, run.Config.APIKey)

	clean := &Run{Records: []metrics.Record{{}}}
	assert.Same(t, &clean.Records[0], &clean.Redacted(p.Redactor()).Records[0], "nothing to redact: nothing copied")
}

// TestRunRedactedSplitSecret: a server that streams a key back a few
// characters per chunk leaves no chunk holding it; the reply's text does,
// and every raw response of such a reply is blanked, even when another copy
// stood whole in one chunk (a count of copies could balance out).
func TestRunRedactedSplitSecret(t *testing.T) {
	const secret = "sk-run-secret"
	p := plan.NewProfile()
	p.APIKey = secret
	chunk := func(s string) metrics.RawResponse {
		return metrics.RawResponse{At: 1, Data: []byte(`{"choices":[{"delta":{"content":"` + s + `"}}]}`)}
	}
	text := "sk-run-secret and sk-run-secret"
	clean := "no key here"
	run := &Run{Config: p, Records: []metrics.Record{
		{ResponseText: &text, Raw: &metrics.Raw{Payload: []byte(`{}`), Responses: []metrics.RawResponse{
			{At: 1, Data: []byte(`{"c":"sk-run-secret","logprobs":[{"token":"sk-run-secret"}]}`)}, chunk(" and sk-ru"), chunk("n-secret")}}},
		{ResponseText: &clean, Raw: &metrics.Raw{Payload: []byte(`{}`), Responses: []metrics.RawResponse{chunk("no key here")}}},
	}}
	red := run.Redacted(p.Redactor())
	for _, x := range red.Records[0].Raw.Responses {
		assert.Equal(t, plan.Redacted, string(x.Data))
		assert.Equal(t, int64(1), x.At, "the stamps stay")
	}
	assert.Equal(t, plan.Redacted+" and "+plan.Redacted, *red.Records[0].ResponseText)
	assert.Equal(t, `{"choices":[{"delta":{"content":"no key here"}}]}`, string(red.Records[1].Raw.Responses[0].Data), "a clean reply keeps its chunks")
	assert.Contains(t, string(run.Records[0].Raw.Responses[1].Data), "sk-ru", "the original is untouched")
}
