package cachesim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/dataset"
)

// row is a trace row at t ms (NaN: none) of input length isl over ids.
func row(line int, t float64, isl, osl int, ids ...int64) dataset.TraceRow {
	return dataset.TraceRow{Line: line, Timestamp: t, Delay: math.NaN(), InputLength: isl, OutputLength: osl, HashIDs: ids}
}

func replay(t *testing.T, cfg Config, rows ...dataset.TraceRow) Result {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	for _, r := range rows {
		require.NoError(t, s.Add(r))
	}
	return s.Result()
}

func TestSharedPrefixHits(t *testing.T) {
	r := replay(t, Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 400},
		row(1, 0, 10, 0, 1, 2, 3), // 2 full blocks and 2 tokens
		row(2, 1, 10, 0, 1, 2, 3), // the same prompt: its full blocks hit
		row(3, 2, 12, 0, 1, 9, 10),
		row(4, 3, 8, 0, 5, 2))
	assert.Equal(t, 4, r.Requests)
	assert.Equal(t, int64(40), r.PromptTokens)
	assert.Equal(t, int64(8+4), r.HitTokens, "2 blocks, then the 1 block of the shared prefix; a different first block shares nothing")
	assert.Equal(t, 2, r.RequestsWithHits)
	assert.InDelta(t, 12.0/40, r.HitRatio, 1e-12)
	assert.Zero(t, r.BlocksEvicted)
	assert.Equal(t, 100, r.CapacityBlocks)
}

// A reply's blocks are cached at completion, the first holding the
// prompt's partial block; the same prompt gets the same reply.
func TestReplyBlocks(t *testing.T) {
	r := replay(t, Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 400},
		row(1, 0, 6, 6, 1, 2),  // 1 full block, then (6+6)/4 = 3 blocks with the reply
		row(2, 1, 6, 10, 1, 2)) // the same prompt, a longer reply: 4 blocks, 3 shared
	assert.Equal(t, 4, r.PeakBlocks)
	assert.Equal(t, int64(4), r.HitTokens)
}

// The capacity is in whole blocks and evicts the least recently used; a
// prompt larger than the cache keeps its head.
func TestEviction(t *testing.T) {
	r := replay(t, Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 9}, // 2 blocks
		row(1, 0, 12, 0, 1, 2, 3),
		row(2, 1, 4, 0, 1),
		row(3, 2, 8, 0, 1, 2))
	assert.Equal(t, 2, r.CapacityBlocks)
	assert.Equal(t, int64(4+8), r.HitTokens, "the first prompt's head, its first 2 blocks, stays cached")
	assert.Equal(t, uint64(2), r.BlocksEvicted, "block 3, when admitted and again when completed (the last touched first, then the eviction)")
}

// Completions are replayed at their time: a request still running when
// the next arrives caches its blocks after that arrival.
func TestCompletionsAtTheirTime(t *testing.T) {
	rows := []dataset.TraceRow{row(1, 0, 4, 1, 1), row(2, 1, 4, 1, 2), row(3, 2, 4, 1, 1)}
	at := Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 4} // 1 block
	assert.Zero(t, replay(t, at, rows...).HitTokens, "each request done as it arrives: block 2 evicts block 1")
	at.TTFTms = 1.5
	assert.Equal(t, int64(4), replay(t, at, rows...).HitTokens, "the first completes at 1.5 ms, after the second arrived: block 1 is back for the third")
}

// Cache blocks smaller than the trace's hash blocks: a block is named by
// the hash ids its tokens come from and where in them; tokens past the
// hash ids are the row's own.
func TestCacheBlocksWithinHashBlocks(t *testing.T) {
	r := replay(t, Config{HashBlockSize: 8, CacheBlockSize: 4, CapacityTokens: 400},
		row(1, 0, 12, 0, 1),   // block 1, then 4 tokens of the row's own
		row(2, 1, 6, 0, 1),    // the first half of block 1: 1 full cache block, hit
		row(3, 2, 12, 0, 1),   // hash block 1 hits (2 cache blocks); its own tokens do not
		row(4, 3, 8, 0, 7, 1)) // hash id 1 at another position: another block
	assert.Equal(t, int64(4+8), r.HitTokens)
}

func TestBackwardsTimestamp(t *testing.T) {
	s, err := New(Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 40})
	require.NoError(t, err)
	require.NoError(t, s.Add(row(1, 5, 4, 0, 1)))
	require.NoError(t, s.Add(row(2, math.NaN(), 4, 0, 1)), "no timestamp: arrives with the previous row")
	err = s.Add(row(3, 4, 4, 0, 1))
	var le *dataset.LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "timestamp", le.Field)
	assert.Contains(t, le.Msg, "timestamp 4 goes backwards: line 2 arrived at 5")
	assert.Contains(t, le.Msg, "sort the trace by timestamp")
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{HashBlockSize: 0, CacheBlockSize: 4, CapacityTokens: 4}, "hash block size must be at least 1"},
		{Config{HashBlockSize: 4, CacheBlockSize: 16, CapacityTokens: 8}, "a KV cache of 8 tokens holds no block of 16 tokens"},
		{Config{HashBlockSize: 4, CacheBlockSize: 1, CapacityTokens: 1 << 30}, "at most 2097152 blocks"},
		{Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 4, ITLms: -1}, "ttft and itl must be finite"},
	} {
		_, err := New(c.cfg)
		assert.ErrorContains(t, err, c.want)
	}
}
