package endpoint

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestADroppedCacheCountSaysWhy: a cache count that is dropped (above the
// prompt tokens, or not a count) says why in Usage.CacheDropped; one that
// is kept, absent or null says nothing.
func TestADroppedCacheCountSaysWhy(t *testing.T) {
	for usage, want := range map[string]string{
		`{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":50}}`:   "50 cached tokens, more than the 5 prompt tokens",
		`{"prompt_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":-4}}`:   "a cached token count that is negative (-4)",
		`{"prompt_tokens":9,"completion_tokens":2,"prompt_cache_hit_tokens":1.5}`:                  "a cached token count that is not an integer (1.5)",
		`{"prompt_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}`:    "",
		`{"prompt_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":null}}`: "",
		`{"prompt_tokens":9,"completion_tokens":2}`:                                                "",
	} {
		t.Run(usage, func(t *testing.T) {
			srv := newRawServer(t, respond(chunked(200, "text/event-stream", tokA,
				`data: {"choices":[],"usage":`+usage+"}\n\n", done)))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
			require.Nil(t, res.Err)
			require.NotNil(t, res.Usage)
			assert.Equal(t, want, res.Usage.CacheDropped)
			assert.True(t, res.Usage.Trusted(), "the rest of the usage stays")
		})
	}
}
