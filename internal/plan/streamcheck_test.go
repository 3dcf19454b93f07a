package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRequireStreamCompletionNeedsStreamingChat: the flag checks streamed
// chat replies, so it is refused without --streaming, on another endpoint
// type and beside --extra-inputs that turn streaming off, each error
// naming the flag and what to do.
func TestRequireStreamCompletionNeedsStreamingChat(t *testing.T) {
	p := valid()
	p.RequireStreamCompletion, p.Streaming = true, true
	require.NoError(t, p.Check())
	p.ExtraInputs = []string{"stream:true", "temperature:0"}
	require.NoError(t, p.Check(), "stream:true changes nothing")

	tests := []struct {
		name string
		edit func(*Profile)
		want []string
	}{
		{"no --streaming", func(p *Profile) { p.Streaming = false },
			[]string{"--require-stream-completion checks streamed replies only: add --streaming, or remove it"}},
		{"completions", func(p *Profile) { p.EndpointType = EndpointCompletions },
			[]string{"--require-stream-completion checks streamed chat replies only, not --endpoint-type completions: use --endpoint-type chat --streaming, or remove it"}},
		{"embeddings without streaming", func(p *Profile) { p.EndpointType, p.Streaming = EndpointEmbeddings, false },
			[]string{"not --endpoint-type embeddings", "add --streaming"}},
		{"stream:false", func(p *Profile) { p.ExtraInputs = []string{"stream:false"} },
			[]string{"--require-stream-completion has nothing to check: --extra-inputs stream:false asks every request not to stream; remove one of them"}},
		{"stream in JSON", func(p *Profile) { p.ExtraInputs = []string{`{"stream": 0}`} },
			[]string{"--extra-inputs stream:0 asks every request not to stream"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := valid()
			q.RequireStreamCompletion, q.Streaming = true, true
			tc.edit(&q)
			err := q.Check()
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			for _, fe := range FieldErrors(err) {
				assert.Equal(t, "require_stream_completion", fe.Field)
			}
		})
	}
	q := valid()
	q.EndpointType = EndpointCompletions
	q.ExtraInputs = []string{"stream:false"}
	require.NoError(t, q.Check(), "without the flag nothing changes")
}
