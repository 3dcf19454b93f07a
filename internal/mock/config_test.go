package mock

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEngineFlagsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"block size negative", Config{BlockSize: -1}, "--block-size must be between 1 and 4096 tokens, got -1"},
		{"block size huge", Config{BlockSize: maxBlockSize + 1}, "--block-size"},
		{"kv cache negative", Config{KVCacheTokens: -1}, "--kv-cache-tokens must be >= 0"},
		{"kv cache under a block", Config{BlockSize: 16, KVCacheTokens: 15}, "at least one block of --block-size 16"},
		{"kv cache too large", Config{BlockSize: 1, KVCacheTokens: maxCacheBlocks + 1}, "--kv-cache-tokens must be at most 2097152"},
		{"max num seqs", Config{MaxNumSeqs: -2}, "--max-num-seqs must be >= 0"},
		{"no gpus", Config{GPUMetrics: true}, "--gpus must be between 1 and 64 with --gpu-metrics, got 0"},
		{"too many gpus", Config{GPUMetrics: true, GPUs: maxGPUs + 1}, "--gpus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	s, err := New(Config{})
	require.NoError(t, err, "the zero Config is valid")
	assert.Equal(t, defaultBlockSize, s.blockSize)
	assert.ErrorContains(t, (&Config{}).Validate(), "--block-size", "a zero --block-size given as a flag is refused")
}
