package cachesim

import (
	"github.com/aiperf-go/aiperf/internal/kvcache"
)

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

// newStream returns an empty stream.
func (s *Simulator) newStream() *stream {
	return &stream{seq: kvcache.NewSequence(s.seed, 1, 0)}
}

// add appends the tokens [0, n) of a message to st, cut at the cache
// blocks' boundaries; name names a piece [lo, hi) of them.
func (s *Simulator) add(st *stream, n int, name func(lo, hi int) uint64) {
	b := s.cfg.CacheBlockSize
	for lo := 0; lo < n; {
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
}

// names are st's full blocks so far, a slice later blocks never write.
func (st *stream) names() []uint64 {
	h := st.seq.Hashes()
	return h[:len(h):len(h)]
}

// addPrompt appends e's prompt to st.
func (s *Simulator) addPrompt(st *stream, e *entry) {
	s.add(st, e.isl, func(lo, hi int) uint64 {
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
func (s *Simulator) addReply(st *stream, osl int) {
	s.add(st, osl, func(lo, hi int) uint64 {
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
