package mock

import (
	"context"
	"time"
)

// flight is one admitted request's life on the mock's engine: its times,
// which feed the latency histograms, and its hold on the KV cache. Only its
// handler's goroutine uses it.
type flight struct {
	s        *Server
	g        *generation
	pacer    pacer     // when its tokens are due (prefill included)
	complete bool      // set by the handler once the whole reply is out
	arrival  time.Time // the request arrived
	admitted time.Time // it got a generation slot (--max-num-seqs)
	last     time.Time // its latest token went out
	flush    time.Time // its latest token chunk's flush returned (streaming)
	sent     int       // tokens sent
	held     int64     // KV-cache tokens held while it runs
	freed    bool      // its generation slot was given back (freeSlot)
	itl      itlCounts
}

// admit waits for a generation slot (arrival order under --max-num-seqs),
// then looks the prompt up in the prefix cache, reserves its KV-cache
// blocks and returns the flight, its tokens paced from its arrival (from
// now if it had to wait for the slot) by the latency model. If ctx ends
// first it returns nil, holding nothing, and marks x as a client gone.
func (s *Server) admit(ctx context.Context, x *exchange, g *generation, arrival time.Time) *flight {
	ok, waited := s.sched.acquire(ctx)
	if !ok {
		x.status = statusClientGone
		return nil
	}
	f := &flight{s: s, g: g, arrival: arrival, admitted: time.Now()}
	queued := f.admitted.Sub(arrival)
	s.metrics.queue.observe(queued.Seconds(), 1)
	bs := int64(s.blockSize)
	f.held = (int64(g.usage.PromptTokens+g.tokens) + bs - 1) / bs * bs
	s.kvHeld.Add(f.held)
	origin := arrival
	if waited {
		origin = f.admitted
		s.timing.Load().queue.observe(int64(queued))
	} else {
		s.timing.Load().queue.observe(0)
	}
	f.pacer = s.newPacer(origin, arrival, s.prefill(g), g.tokens)
	return f
}

// prefill consults the prefix cache for g's prompt, reports the cached
// tokens in g's usage (unless --no-cache-report) and returns the number of
// uncached prompt tokens, which the model prefills. As in vLLM
// (KVCacheManager.get_computed_blocks), a hit covers at most the prompt's
// first n−1 tokens, in whole blocks: the last token is always recomputed
// to obtain its logits, so a prompt of n tokens reports at most
// ⌊(n−1)/block⌋ blocks cached, and a prompt of exactly whole blocks found
// whole in the cache still prefills its last block. Its blocks are all
// cached (touched) either way.
func (s *Server) prefill(g *generation) int {
	prompt := g.usage.PromptTokens
	hashes := g.blocks.Hashes()
	usable := min(len(hashes), max(prompt-1, 0)/s.blockSize)
	cached := s.cache.Serve(hashes[:usable]) * s.blockSize
	if usable < len(hashes) { // the whole prompt again, so its blocks keep vLLM's eviction order
		s.cache.Store(hashes)
	}
	s.metrics.cacheQueries.Add(uint64(prompt))
	s.metrics.cacheHits.Add(uint64(cached))
	if !s.cfg.NoCacheReport {
		g.usage.PromptDetails = &promptDetails{CachedTokens: cached}
	}
	return prompt - cached
}

// tokens records that n tokens went out at now: the first one sets the time
// to first token (from arrival, so queueing counts, as in vLLM) and counts
// the prompt as processed; later ones are inter-token gaps, n at a time
// spread evenly (a non-streaming reply).
func (f *flight) tokens(now time.Time, n int) {
	if n <= 0 {
		return
	}
	if f.sent == 0 {
		f.s.metrics.ttft.observe(now.Sub(f.arrival).Seconds(), 1)
		f.s.metrics.promptTokens.Add(uint64(f.g.usage.PromptTokens))
		f.sent, f.last, n = 1, now, n-1
	}
	if n > 0 {
		f.itl.observe(now.Sub(f.last).Seconds()/float64(n), uint64(n))
		f.sent += n
		f.last = now
	}
}

// finish ends the flight: a complete reply counts under its finish reason
// and has its blocks cached (prompt and reply, so the next turn of a
// conversation finds both); a reply cut short counts as an abort. It
// releases the KV cache and the generation slot.
func (f *flight) finish() {
	s, m := f.s, f.s.metrics
	m.e2e.observe(time.Since(f.arrival).Seconds(), 1)
	m.itl.add(&f.itl)
	m.generationTokens.Add(uint64(f.sent))
	reason := "abort"
	if f.complete {
		reason = f.g.finish
		s.cacheReply(f.g)
		if sd := f.g.spec; sd != nil {
			m.specDrafts.Add(uint64(sd.NumSpecSteps))
			m.specDraftTokens.Add(uint64(sd.NumDraftTokens))
			m.specAccepted.Add(uint64(sd.NumAcceptedDraftTokens))
		}
	}
	m.finish(reason)
	s.kvHeld.Add(-f.held)
	f.freeSlot()
}

// freeSlot gives the generation slot back, once: when the last token has
// gone out (streaming) or is due (non-streaming), before the reply's
// closing bytes, so that a client which sends its next request the moment
// its reply ends never finds its own slot still held; else at finish.
func (f *flight) freeSlot() {
	if !f.freed {
		f.freed = true
		f.s.sched.release()
	}
}

// cacheReply caches g's prompt and reply blocks. Only the ids of a real
// tokenizer can match the next turn's re-tokenized reply; without one,
// nothing is added.
func (s *Server) cacheReply(g *generation) {
	if s.wordIDs == nil {
		return
	}
	tag := uint64(0)
	if g.ep.chat {
		tag = assistantTag
	}
	for k := range g.tokens {
		g.blocks.add(segment{ids: s.wordIDs[k%len(words)], tag: tag})
		tag = 0
	}
	s.cache.Store(g.blocks.Hashes())
}

// assistantTag marks a chat reply's first token, as the assistant message
// that carries it in the next turn is marked.
var assistantTag = roleTag("assistant")

// kvUsage is vllm:kv_cache_usage_perc: the share of the KV cache's blocks
// held by running requests (their prompt and output tokens). Cached blocks
// no running request holds are free to evict and do not count, as in vLLM.
func (s *Server) kvUsage() float64 {
	return min(1, float64(s.kvHeld.Load())/float64(s.kvCapacity))
}
