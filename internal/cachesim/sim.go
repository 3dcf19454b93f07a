package cachesim

import (
	"container/heap"
	"fmt"
	"hash/maphash"
	"math"

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
}

// Simulator replays trace rows through a prefix cache. Use New, Add each
// row in file order, then Result.
type Simulator struct {
	cfg     Config
	cache   *kvcache.Cache
	seed    maphash.Seed
	now     float64 // the latest arrival, ms
	nowLine int
	pending completions
	res     Result
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
	case cfg.TTFTms < 0 || cfg.ITLms < 0 || math.IsNaN(cfg.TTFTms+cfg.ITLms) || math.IsInf(cfg.TTFTms+cfg.ITLms, 0):
		return nil, fmt.Errorf("ttft and itl must be finite and at least 0 ms, got %g and %g", cfg.TTFTms, cfg.ITLms)
	}
	blocks := kvcache.Blocks(cfg.CapacityTokens, cfg.CacheBlockSize)
	s := &Simulator{cfg: cfg, cache: kvcache.New(blocks), seed: maphash.MakeSeed(), now: math.Inf(-1)}
	s.res = Result{CapacityTokens: cfg.CapacityTokens, CacheBlockSize: cfg.CacheBlockSize, CapacityBlocks: blocks,
		TTFTms: cfg.TTFTms, ITLms: cfg.ITLms}
	return s, nil
}

// Add replays one row: the completions due by its arrival, then its
// admission. A row arrives at its timestamp, or without one at the
// previous row's arrival plus its delay; one that would arrive before the
// previous row is refused with a *dataset.LineError (a trace replays in
// time order).
func (s *Simulator) Add(row dataset.TraceRow) error {
	at := row.Timestamp
	if math.IsNaN(at) {
		at = max(s.now, 0)
		if !math.IsNaN(row.Delay) {
			at += row.Delay
		}
	}
	if at < s.now {
		return &dataset.LineError{Field: "timestamp", Msg: fmt.Sprintf(
			"timestamp %v goes backwards: line %d arrived at %v; the simulator replays requests in time order: sort the trace by timestamp",
			at, s.nowLine, s.now)}
	}
	s.now, s.nowLine = at, row.Line
	s.completeUntil(at)
	p := s.prompt(row)
	hit := s.cache.Serve(p.names)
	s.res.Requests++
	s.res.PromptTokens += int64(row.InputLength)
	s.res.HitTokens += int64(hit * s.cfg.CacheBlockSize)
	if hit > 0 {
		s.res.RequestsWithHits++
	}
	s.peak()
	end := at + s.duration(row.OutputLength)
	heap.Push(&s.pending, completion{at: end, seq: s.res.Requests, names: s.withReply(p, row.OutputLength)})
	return nil
}

// duration is how long a request of osl output tokens runs, in ms.
func (s *Simulator) duration(osl int) float64 {
	if osl < 1 {
		return s.cfg.TTFTms
	}
	return s.cfg.TTFTms + float64(osl-1)*s.cfg.ITLms
}

// completeUntil stores the blocks of every request done by t, in the order
// they complete.
func (s *Simulator) completeUntil(t float64) {
	for len(s.pending) > 0 && s.pending[0].at <= t {
		c := heap.Pop(&s.pending).(completion)
		s.cache.Store(c.names)
		s.peak()
	}
}

func (s *Simulator) peak() {
	_, blocks := s.cache.Counters()
	s.res.PeakBlocks = max(s.res.PeakBlocks, blocks)
}

// Result completes every request still running and returns the replay's
// figures.
func (s *Simulator) Result() Result {
	s.completeUntil(math.Inf(1))
	r := s.res
	r.BlocksEvicted = s.cache.Evictions()
	if r.PromptTokens > 0 {
		r.HitRatio = float64(r.HitTokens) / float64(r.PromptTokens)
	}
	return r
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
