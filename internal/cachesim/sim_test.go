package cachesim

import (
	"context"
	"fmt"
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
		s.Add(r)
	}
	r, err := s.Result(context.Background())
	require.NoError(t, err)
	return r
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
	// Row 2's one block is never a hit (its last token is recomputed);
	// row 3 looks up its first block only (7 of its 8 tokens, in whole blocks).
	assert.Equal(t, int64(4), r.HitTokens, "the first prompt's head, its first 2 blocks, stays cached")
	assert.Equal(t, uint64(2), r.BlocksEvicted, "block 3, when admitted and again when completed (the last touched first, then the eviction)")
}

// Completions are replayed at their time: a request still running when
// the next arrives caches its blocks after that arrival.
func TestCompletionsAtTheirTime(t *testing.T) {
	// 5 tokens each: one full block, looked up (a hit never covers the last token).
	rows := []dataset.TraceRow{row(1, 0, 5, 1, 1, 101), row(2, 1, 5, 1, 2, 102), row(3, 2, 5, 1, 1, 103)}
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

// turn is row r as turn of session id, at its delay (NaN: none) after
// the session's previous turn.
func turn(r dataset.TraceRow, id string, delay float64) dataset.TraceRow {
	r.SessionID, r.Delay = &id, delay
	return r
}

// A delay is after the previous turn of the same session, not the previous
// line: a trace listed session by session replays in arrival order.
func TestDelaysPerSession(t *testing.T) {
	cfg := Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 8} // 2 blocks
	r := replay(t, cfg,
		turn(row(1, 0, 8, 0, 1, 2), "x", math.NaN()),
		turn(row(2, math.NaN(), 4, 0, 3), "x", 1000), // at 1000
		turn(row(3, 500, 8, 0, 1, 2), "y", math.NaN()))
	// in time order: x1 caches blocks 1, 2; y1 at 500 hits block 1 (its
	// last block holds its last token, recomputed); x2 at 1000 re-sends x1's
	// prompt, whose 2 blocks hit. (In file order x2 would evict block 1
	// before y1 came.)
	assert.Equal(t, 3, r.Requests)
	assert.Equal(t, 1, r.LaterTurns)
	assert.Equal(t, int64(8+12+8), r.PromptTokens, "a later turn re-sends the earlier prompt")
	assert.Equal(t, int64(4+8), r.HitTokens)

	r = replay(t, Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 8, TTFTms: 600},
		turn(row(1, 0, 8, 1, 1, 2), "x", math.NaN()),
		turn(row(2, 100, 4, 0, 3), "x", math.NaN()), // not before x1 ends at 600
		turn(row(3, 500, 8, 0, 1, 2), "y", math.NaN()))
	assert.Equal(t, int64(4+8), r.HitTokens, "x2 comes after y1, once x1's reply is in")
}

// A session's turn sends the conversation so far: earlier prompts and
// replies, then its own prompt. With distinct hash ids, everything but its
// own prompt and the block straddling the previous reply and it hits.
func TestTurnsResendHistory(t *testing.T) {
	cfg := Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 400}
	r := replay(t, cfg,
		turn(row(1, 0, 8, 6, 1, 2), "s", math.NaN()),  // 8 + 6: blocks P1 P2 R1, 2 reply tokens left
		turn(row(2, math.NaN(), 8, 6, 3, 4), "s", 10), // 14 + 8 = 22 tokens: 5 full blocks, 3 cached
		turn(row(3, math.NaN(), 8, 2, 5, 6), "s", 10)) // 22 + 6 + 8 = 36 tokens: 9 blocks, 7 cached
	assert.Equal(t, int64(8+22+36), r.PromptTokens)
	assert.Equal(t, int64(4*(3+7)), r.HitTokens)
	assert.Equal(t, 2, r.RequestsWithHits)
	assert.Equal(t, 2, r.LaterTurns)
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{HashBlockSize: 0, CacheBlockSize: 4, CapacityTokens: 4}, "hash block size must be at least 1"},
		{Config{HashBlockSize: 4, CacheBlockSize: 16, CapacityTokens: 8}, "a KV cache of 8 tokens holds no block of 16 tokens"},
		{Config{HashBlockSize: 4, CacheBlockSize: 1, CapacityTokens: 1 << 30}, "at most 2097152 blocks"},
		{Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 4, ITLms: -1}, "itl must be from 0 to 86400000 ms (a day), got -1"},
		{Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 4, TTFTms: 1e308}, "ttft must be from 0 to 86400000 ms (a day), got 1e+308"},
		{Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 4, TTFTms: math.NaN()}, "ttft must be from 0 to 86400000 ms (a day), got NaN"},
	} {
		_, err := New(c.cfg)
		assert.ErrorContains(t, err, c.want)
	}
}

// cancelledAfter is a context that reports itself cancelled from its
// n-th look on: the replay's looks, counted, stand for a Ctrl-C arriving
// mid-replay, with no clock involved.
type cancelledAfter struct {
	context.Context
	n, looks int
}

func (c *cancelledAfter) Err() error {
	if c.looks++; c.looks >= c.n {
		return context.Canceled
	}
	return nil
}

// A replay stops when its context is cancelled, mid-way and in the final
// completions, with the context's error and no figures; before, it ran to
// its end whatever the context (a Ctrl-C during a long simulation was
// ignored and the report written).
func TestReplayStopsWhenCancelled(t *testing.T) {
	rows := make([]dataset.TraceRow, 10*checkEvery)
	for i := range rows {
		rows[i] = row(i+1, float64(i), 8, 1, int64(i), int64(i+1))
	}
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		// The third look: between arrivals, completing the first request.
		{"mid-replay", Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 64},
			"the KV-cache simulation stopped with 1 requests to complete: context canceled"},
		{"completing", Config{HashBlockSize: 4, CacheBlockSize: 4, CapacityTokens: 64, TTFTms: 1e6}, // all still running at the end
			fmt.Sprintf("the KV-cache simulation stopped with %d requests to complete: context canceled", len(rows))},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.cfg)
			require.NoError(t, err)
			for _, r := range rows {
				s.Add(r)
			}
			looks := 3 // mid-replay: request 0's, request 1's, then completing request 0
			if c.cfg.TTFTms > 0 {
				looks = len(rows)/checkEvery + 1 // the replay's looks, then the first of the completions
			}
			_, err = s.Result(&cancelledAfter{Context: context.Background(), n: looks})
			require.ErrorIs(t, err, context.Canceled)
			assert.EqualError(t, err, c.want)
			_, err = s.Result(context.Background())
			assert.ErrorIs(t, err, context.Canceled, "spent")
		})
	}
}

// A Ctrl-C inside one huge request stops it there: the replay looks at its
// context while it cuts a prompt into blocks and while it caches them, not
// only between requests (a 2^24-token prompt at a block size of 1 ran to
// its end, about a minute).
func TestReplayStopsInsideARequest(t *testing.T) {
	s, err := New(Config{HashBlockSize: 512, CacheBlockSize: 1, CapacityTokens: 64})
	require.NoError(t, err)
	s.Add(row(1, 0, 1<<20, 1))
	ctx := &cancelledAfter{Context: context.Background(), n: 2} // the look before the request passes
	_, err = s.Result(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.EqualError(t, err, "the KV-cache simulation stopped at request 0 of 1: context canceled")
}

// BenchmarkHugeRequest: a prompt of 2^24 tokens (input_length's bound) at
// a block size of 1, through a cache of 64 blocks.
func BenchmarkHugeRequest(b *testing.B) {
	for b.Loop() {
		s, err := New(Config{HashBlockSize: 512, CacheBlockSize: 1, CapacityTokens: 64})
		require.NoError(b, err)
		s.Add(row(1, 0, 1<<24, 1))
		_, err = s.Result(context.Background())
		require.NoError(b, err)
	}
}
