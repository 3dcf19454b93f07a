package cachesim

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"slices"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/kvcache"
)

// Config is a simulated server.
type Config struct {
	// HashBlockSize is the tokens per hash id of the trace.
	HashBlockSize int
	// CacheBlockSize is the tokens per KV-cache block (--block-size of the
	// mock, vLLM's page size).
	CacheBlockSize int
	// CapacityTokens is the KV cache's size in tokens (whole blocks count).
	CapacityTokens int
	// TTFTms and ITLms make a request's duration: ttft + (osl-1) × itl ms
	// (0: a request completes as it arrives).
	TTFTms, ITLms float64
}

// Result is what a replay found.
type Result struct {
	CapacityTokens int     `json:"kv_cache_tokens"`
	CacheBlockSize int     `json:"block_size"`
	CapacityBlocks int     `json:"capacity_blocks"`
	TTFTms         float64 `json:"ttft_ms"`
	ITLms          float64 `json:"itl_ms"`
	Requests       int     `json:"requests"`
	// PromptTokens and HitTokens are the prompt tokens looked up and, of
	// them, found cached (vLLM's prefix_cache_queries and _hits).
	PromptTokens int64 `json:"prompt_tokens"`
	HitTokens    int64 `json:"hit_tokens"`
	// HitRatio is HitTokens / PromptTokens.
	HitRatio float64 `json:"hit_ratio"`
	// RequestsWithHits counts the requests that found a cached prefix.
	RequestsWithHits int `json:"requests_with_hits"`
	// BlocksEvicted counts the blocks evicted to stay within the capacity;
	// PeakBlocks is the most blocks ever cached at once.
	BlocksEvicted uint64 `json:"blocks_evicted"`
	PeakBlocks    int    `json:"peak_blocks"`
	// LaterTurns counts the requests that are a session's second turn or
	// later: each sends its conversation so far (earlier prompts and
	// replies) before its own prompt, all counted in PromptTokens.
	LaterTurns int `json:"later_turns"`
}

// MaxDurationMs bounds the simulated TTFT and ITL: a day each, so that a
// request's duration, ttft + (osl-1) × itl with osl at most 2^24, stays a
// finite time.
const MaxDurationMs = 24 * 60 * 60 * 1000

// checkEvery is how many requests (or completions) the replay handles
// between looks at its context: one, as a turn late in a long session
// sends its whole conversation (a request's work grows with its turn), and
// a look costs a few nanoseconds.
const checkEvery = 1

// Simulator replays trace rows through a prefix cache. Use New, Add each
// row in file order, then Result.
type Simulator struct {
	cfg      Config
	cache    *kvcache.Cache
	seed     maphash.Seed
	entries  []entry
	sessions map[string]int32 // session id → its index in turns
	turns    []sessionTurns
	last     float64 // the previous row's arrival, ms
	pending  completions
	res      Result
	done     bool
	spent    error // why a replay stopped before its end
}

// entry is a row to replay: when it arrives, and what it sends.
type entry struct {
	at       float64
	line     int
	isl, osl int
	ids      []int64
	session  int32 // -1: none
}

// sessionTurns is what the arrivals of a session's next turn depend on:
// when its latest turn ends (as simulated) and how many turns it has.
type sessionTurns struct {
	end float64
	n   int32
}

// New returns a simulator of cfg's server with an empty cache.
func New(cfg Config) (*Simulator, error) {
	switch {
	case cfg.HashBlockSize < 1:
		return nil, fmt.Errorf("hash block size must be at least 1 token, got %d", cfg.HashBlockSize)
	case cfg.CacheBlockSize < 1:
		return nil, fmt.Errorf("cache block size must be at least 1 token, got %d", cfg.CacheBlockSize)
	case cfg.CapacityTokens < cfg.CacheBlockSize:
		return nil, fmt.Errorf("a KV cache of %d tokens holds no block of %d tokens: give at least %d",
			cfg.CapacityTokens, cfg.CacheBlockSize, cfg.CacheBlockSize)
	case cfg.CapacityTokens/cfg.CacheBlockSize > kvcache.MaxBlocks:
		return nil, fmt.Errorf("a KV cache of %d tokens is %d blocks of %d tokens: at most %d blocks (%d tokens) are simulated",
			cfg.CapacityTokens, cfg.CapacityTokens/cfg.CacheBlockSize, cfg.CacheBlockSize, kvcache.MaxBlocks, kvcache.MaxBlocks*cfg.CacheBlockSize)
	case !(cfg.TTFTms >= 0 && cfg.TTFTms <= MaxDurationMs):
		return nil, fmt.Errorf("ttft must be from 0 to %d ms (a day), got %g", MaxDurationMs, cfg.TTFTms)
	case !(cfg.ITLms >= 0 && cfg.ITLms <= MaxDurationMs):
		return nil, fmt.Errorf("itl must be from 0 to %d ms (a day), got %g", MaxDurationMs, cfg.ITLms)
	}
	blocks := kvcache.Blocks(cfg.CapacityTokens, cfg.CacheBlockSize)
	s := &Simulator{cfg: cfg, cache: kvcache.New(blocks), seed: maphash.MakeSeed(), sessions: map[string]int32{}}
	s.res = Result{CapacityTokens: cfg.CapacityTokens, CacheBlockSize: cfg.CacheBlockSize, CapacityBlocks: blocks,
		TTFTms: cfg.TTFTms, ITLms: cfg.ITLms}
	return s, nil
}

// Add keeps one row for the replay, resolving when it arrives: a later turn
// of a session (by session_id) at its timestamp, or without one its delay
// after the session's previous turn ends, and never before that end (the
// replay sends a turn once the previous reply is in); any other row at its
// timestamp, or without one at the previous row's arrival plus its delay.
func (s *Simulator) Add(row dataset.TraceRow) {
	e := entry{line: row.Line, isl: row.InputLength, osl: row.OutputLength, ids: slices.Clone(row.HashIDs), session: -1}
	delay := row.Delay
	if math.IsNaN(delay) {
		delay = 0
	}
	base := max(s.last, 0)
	var st *sessionTurns
	if row.SessionID != nil {
		k, ok := s.sessions[*row.SessionID]
		if !ok {
			k = int32(len(s.turns))
			s.sessions[*row.SessionID] = k
			s.turns = append(s.turns, sessionTurns{})
		}
		e.session, st = k, &s.turns[k]
		if st.n > 0 {
			base = st.end
		}
	}
	e.at = base + delay
	if !math.IsNaN(row.Timestamp) {
		e.at = row.Timestamp
	}
	if st != nil {
		if st.n > 0 {
			e.at = max(e.at, st.end)
			s.res.LaterTurns++
		}
		st.n++
		st.end = e.at + s.duration(e.osl)
	}
	s.last = e.at
	s.entries = append(s.entries, e)
}

// replay replays the rows kept, in arrival order (file order at equal
// times): the completions due by each arrival, then its admission. A
// session's turn sends its conversation so far, every earlier turn's
// prompt and reply, before its own prompt.
func (s *Simulator) replay(ctx context.Context) error {
	slices.SortStableFunc(s.entries, func(a, b entry) int { return cmp.Compare(a.at, b.at) })
	open := map[int32]*stream{} // the sessions with turns to come
	for i := range s.entries {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return s.stopped(i, err)
			}
		}
		e := &s.entries[i]
		if err := s.completeUntil(ctx, e.at); err != nil {
			return err
		}
		st := open[e.session]
		if st == nil {
			st = s.newStream(e)
		}
		if err := s.addPrompt(ctx, st, e); err != nil {
			return s.stopped(i, err)
		}
		hit, err := s.serve(ctx, st)
		if err != nil {
			return s.stopped(i, err)
		}
		s.res.Requests++
		s.res.PromptTokens += int64(st.tokens)
		s.res.HitTokens += int64(hit * s.cfg.CacheBlockSize)
		if hit > 0 {
			s.res.RequestsWithHits++
		}
		s.peak()
		if err := s.addReply(ctx, st, e.osl); err != nil {
			return s.stopped(i, err)
		}
		heap.Push(&s.pending, completion{at: e.at + s.duration(e.osl), seq: s.res.Requests, names: st.names()})
		if e.session >= 0 {
			if s.turns[e.session].n--; s.turns[e.session].n > 0 {
				open[e.session] = st
			} else {
				delete(open, e.session)
			}
		}
		e.ids = nil
	}
	s.entries = nil
	return nil
}

// stopped is the error of a replay that stopped at request i.
func (s *Simulator) stopped(i int, err error) error {
	return fmt.Errorf("the KV-cache simulation stopped at request %d of %d: %w", i, len(s.entries), err)
}

// duration is how long a request of osl output tokens runs, in ms.
func (s *Simulator) duration(osl int) float64 {
	if osl < 1 {
		return s.cfg.TTFTms
	}
	return s.cfg.TTFTms + float64(osl-1)*s.cfg.ITLms
}

// completeUntil stores the blocks of every request done by t, in the order
// they complete, until ctx ends.
func (s *Simulator) completeUntil(ctx context.Context, t float64) error {
	for len(s.pending) > 0 && s.pending[0].at <= t {
		if err := s.complete(ctx); err != nil {
			return err
		}
	}
	return nil
}

// complete stores the blocks of the next request to complete, until ctx
// ends.
func (s *Simulator) complete(ctx context.Context) error {
	if err := ctx.Err(); err == nil {
		c := heap.Pop(&s.pending).(completion)
		if err = s.cache.StoreContext(ctx, c.names); err == nil {
			s.peak()
			return nil
		}
	}
	return fmt.Errorf("the KV-cache simulation stopped with %d requests to complete: %w", len(s.pending), ctx.Err())
}

// drain completes every request still running.
func (s *Simulator) drain(ctx context.Context) error {
	for len(s.pending) > 0 {
		if err := s.complete(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (s *Simulator) peak() {
	_, blocks := s.cache.Counters()
	s.res.PeakBlocks = max(s.res.PeakBlocks, blocks)
}

// Result replays the rows added, completes every request still running
// and returns the replay's figures. It stops, with ctx's error, when ctx
// is done (it looks every few requests); the simulator is then spent.
func (s *Simulator) Result(ctx context.Context) (Result, error) {
	if s.spent != nil {
		return Result{}, s.spent
	}
	if !s.done {
		s.done = true
		if s.spent = s.replay(ctx); s.spent != nil {
			return Result{}, s.spent
		}
	}
	if s.spent = s.drain(ctx); s.spent != nil {
		return Result{}, s.spent
	}
	r := s.res
	r.BlocksEvicted = s.cache.Evictions()
	if r.PromptTokens > 0 {
		r.HitRatio = float64(r.HitTokens) / float64(r.PromptTokens)
	}
	return r, nil
}

// completion is a running request: when it ends and the blocks it then
// caches.
type completion struct {
	at    float64
	seq   int // arrival order, for ties
	names []uint64
}

// completions is a min-heap of completions by time, then arrival.
type completions []completion

func (h completions) Len() int { return len(h) }
func (h completions) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h completions) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *completions) Push(x any)   { *h = append(*h, x.(completion)) }
func (h *completions) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// serve looks st's prompt up and caches its blocks, as the mock and vLLM
// (KVCacheManager.get_computed_blocks) do: a hit covers at most the
// prompt's first n−1 tokens, in whole blocks (the last token is always
// recomputed for its logits), so a prompt of exactly whole blocks found
// whole in the cache still prefills its last block. It returns the blocks
// served from the cache.
func (s *Simulator) serve(ctx context.Context, st *stream) (int, error) {
	names := st.names()
	usable := min(len(names), max(st.tokens-1, 0)/s.cfg.CacheBlockSize)
	hit, err := s.cache.ServeContext(ctx, names[:usable])
	if err == nil && usable < len(names) { // the whole prompt again, so its blocks keep the mock's eviction order
		err = s.cache.StoreContext(ctx, names)
	}
	return hit, err
}
