package cachesim

import (
	"context"

	"github.com/aiperf-go/aiperf/internal/kvcache"
)

// checkPieces is how many pieces of a message add cuts between looks at
// its context: a message may be 2^24 tokens, a piece each at a block size
// of 1.
const checkPieces = 1 << 16

// Marks folded into the first piece of a message, as the mock folds a chat
// message's role into its first token.
const (
	userMark  uint64 = 0x75736572 // "user"
	replyMark uint64 = 0x7265706c // "repl"
)

// stream is a conversation's token stream as the cache sees it: each turn's
// prompt, then its reply, cut into cache blocks named one word each and
// chained (kvcache.Sequence). A block's word folds the words of the pieces
// it holds (a prompt's or a reply's tokens), so a block that straddles a
// reply and the next prompt is named by both.
type stream struct {
	seq    *kvcache.Sequence
	fill   int    // tokens in the partial block
	word   uint64 // the partial block's pieces, folded
	tokens int    // tokens so far
}

// newStream returns an empty stream sized for e's prompt and reply (its
// first turn's), so that a long one is one allocation, not a growing one.
func (s *Simulator) newStream(e *entry) *stream {
	return &stream{seq: kvcache.NewSequence(s.seed, 1, (e.isl+e.osl)/s.cfg.CacheBlockSize)}
}

// add appends the tokens [0, n) of a message to st, cut at the cache
// blocks' boundaries; name names a piece [lo, hi) of them. It stops with
// ctx's error when ctx ends (it looks every checkPieces pieces).
func (s *Simulator) add(ctx context.Context, st *stream, n int, name func(lo, hi int) uint64) error {
	b := s.cfg.CacheBlockSize
	for k, lo := 0, 0; lo < n; k++ {
		if k%checkPieces == checkPieces-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		hi := lo + min(n-lo, b-st.fill)
		st.word = kvcache.Mix(st.word ^ name(lo, hi))
		st.fill += hi - lo
		st.tokens += hi - lo
		lo = hi
		if st.fill == b {
			st.seq.Add(st.word)
			st.fill, st.word = 0, 0
		}
	}
	return nil
}

// names are st's full blocks so far, a slice later blocks never write.
func (st *stream) names() []uint64 {
	h := st.seq.Hashes()
	return h[:len(h):len(h)]
}

// addPrompt appends e's prompt to st.
func (s *Simulator) addPrompt(ctx context.Context, st *stream, e *entry) error {
	return s.add(ctx, st, e.isl, func(lo, hi int) uint64 {
		w := s.content(e, lo, hi)
		if lo == 0 {
			w ^= userMark
		}
		return w
	})
}

// addReply appends a reply of osl tokens to st. The mock's output token k
// is always the same word, so a piece of a reply is named by where in the
// reply it starts and ends.
func (s *Simulator) addReply(ctx context.Context, st *stream, osl int) error {
	return s.add(ctx, st, osl, func(lo, hi int) uint64 {
		w := kvcache.Mix(uint64(lo)<<32 | uint64(hi-lo))
		if lo == 0 {
			w ^= replyMark
		}
		return w
	})
}

// content is a word standing for the prompt tokens [lo, hi) of e: the
// hash ids covering them and where they start and end in those ids'
// blocks; and for tokens past the hash ids, the row itself (its own
// fresh text).
func (s *Simulator) content(e *entry, lo, hi int) uint64 {
	t := s.cfg.HashBlockSize
	h := kvcache.Mix(uint64(lo%t)<<32 | uint64(hi-lo))
	if hi <= lo {
		return h
	}
	ids := e.ids
	for k := lo / t; k <= (hi-1)/t && k < len(ids); k++ {
		h = kvcache.Mix(h ^ uint64(ids[k]))
	}
	if hi > len(ids)*t {
		h = kvcache.Mix(h ^ (uint64(e.line)<<1 | 1))
	}
	return h
}
