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
// and the raw responses are blanked, while a secret whole in one chunk
// costs only that secret.
func TestRunRedactedSplitSecret(t *testing.T) {
	const secret = "sk-run-secret"
	p := plan.NewProfile()
	p.APIKey = secret
	chunk := func(s string) metrics.RawResponse {
		return metrics.RawResponse{At: 1, Data: []byte(`{"choices":[{"delta":{"content":"` + s + `"}}]}`)}
	}
	split, whole := "key sk-run-secret", "key "+secret
	run := &Run{Config: p, Records: []metrics.Record{
		{ResponseText: &split, Raw: &metrics.Raw{Payload: []byte(`{}`),
			Responses: []metrics.RawResponse{chunk("key sk-"), chunk("run-se"), chunk("cret")}}},
		{ResponseText: &whole, Raw: &metrics.Raw{Payload: []byte(`{}`),
			Responses: []metrics.RawResponse{chunk("key "), chunk(secret)}}},
	}}
	red := run.Redacted(p.Redactor())
	for _, x := range red.Records[0].Raw.Responses {
		assert.Equal(t, plan.Redacted, string(x.Data))
		assert.Equal(t, int64(1), x.At, "the stamps stay")
	}
	assert.Equal(t, "key "+plan.Redacted, *red.Records[0].ResponseText)
	assert.Equal(t, `{"choices":[{"delta":{"content":"key "}}]}`, string(red.Records[1].Raw.Responses[0].Data))
	assert.Equal(t, `{"choices":[{"delta":{"content":"`+plan.Redacted+`"}}]}`, string(red.Records[1].Raw.Responses[1].Data))
	assert.Equal(t, "sk-", string(run.Records[0].Raw.Responses[0].Data[len(`{"choices":[{"delta":{"content":"key `):][:3]),
		"the original is untouched")
}
