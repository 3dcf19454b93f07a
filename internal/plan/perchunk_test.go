package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// perChunk is a valid profile with --per-chunk-usage and what it needs.
func perChunk() Profile {
	p := valid()
	p.PerChunkUsage, p.UseServerTokenCount, p.Streaming = true, true, true
	return p
}

// TestPerChunkUsageNeedsServerCountsStreamingChat: --per-chunk-usage is
// AIPerf's chat streaming option that corrects the server-counted OSL, so
// it is refused without --use-server-token-count, without --streaming, on
// another endpoint type and beside --extra-inputs that turn streaming off,
// each error naming the flag, AIPerf's words and what to do.
func TestPerChunkUsageNeedsServerCountsStreamingChat(t *testing.T) {
	p := perChunk()
	require.NoError(t, p.Check())
	p.ExtraInputs = []string{"stream:true", `{"stream_options": {"continuous_usage_stats": false}}`}
	require.NoError(t, p.Check(), "stream:true and the author's own stream_options change nothing")

	tests := []struct {
		name string
		edit func(*Profile)
		want []string
	}{
		{"no --use-server-token-count", func(p *Profile) { p.UseServerTokenCount = false },
			[]string{"--per-chunk-usage requires --use-server-token-count", "add --use-server-token-count, or remove it"}},
		{"no --streaming", func(p *Profile) { p.Streaming = false },
			[]string{"--per-chunk-usage requires --streaming", "add --streaming, or remove it"}},
		{"completions", func(p *Profile) { p.EndpointType = EndpointCompletions },
			[]string{"--per-chunk-usage requires endpoint type 'chat', not --endpoint-type completions", "use --endpoint-type chat, or remove it"}},
		{"stream:false", func(p *Profile) { p.ExtraInputs = []string{"stream:false"} },
			[]string{"--per-chunk-usage has no chunk to count: --extra-inputs stream:false asks every request not to stream; remove one of them"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := perChunk()
			tc.edit(&q)
			err := q.Check()
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			fes := FieldErrors(err)
			require.Len(t, fes, 1, "one problem, one error: %v", err)
			assert.Equal(t, "per_chunk_usage", fes[0].Field)
		})
	}

	// Every requirement missing at once: every one is named.
	q := valid()
	q.PerChunkUsage, q.EndpointType = true, EndpointEmbeddings
	err := q.Check()
	require.Error(t, err)
	for _, w := range []string{"requires --use-server-token-count", "requires --streaming", "requires endpoint type 'chat'"} {
		assert.Contains(t, err.Error(), w)
	}

	q = valid()
	q.EndpointType = EndpointCompletions
	require.NoError(t, q.Check(), "without the flag nothing changes")
}
