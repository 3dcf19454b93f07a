package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The endpoint's per_chunk_usage (AIPerf's --per-chunk-usage, also spelled
// perChunkUsage) sets the profile's, its line kept for the plan's checks;
// a value that is not a boolean is refused at its line.
func TestPerChunkUsageKey(t *testing.T) {
	for _, key := range []string{"per_chunk_usage", "perChunkUsage"} {
		f, err := parse(
			"benchmark:",
			"  endpoint:",
			"    urls: [http://x:1]",
			"    streaming: true",
			"    use_server_token_count: true",
			"    "+key+": true",
		)
		require.NoError(t, err, key)
		assert.True(t, f.Profile.PerChunkUsage, key)
		assert.Equal(t, "bench.yaml:6: benchmark.endpoint."+key, f.Where(-1, "per_chunk_usage"), "its problems name its line")
		f.Profile.Model = []string{"m"}
		require.NoError(t, f.Profile.Check(), "with what it needs the plan is valid")
		f.Profile.UseServerTokenCount = false
		require.ErrorContains(t, f.Profile.Check(), "requires --use-server-token-count", "the plan checks it as the flag")
	}
	f, err := parse("benchmark:", "  endpoint:", "    urls: [http://x:1]")
	require.NoError(t, err)
	assert.False(t, f.Profile.PerChunkUsage, "unset: off")

	_, err = parse("benchmark:", "  endpoint:", "    per_chunk_usage: sometimes")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bench.yaml:3: benchmark.endpoint.per_chunk_usage:")
}
