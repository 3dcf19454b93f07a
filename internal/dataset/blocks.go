package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// minWords is the smallest block vocabulary accepted: with fewer words,
// blocks of different hash ids could share runs of tokens.
const minWords = 256

// words is a tokenizer's block vocabulary: the corpus's lower-case ASCII
// words w such that " "+w encodes to exactly one token, each stored with
// its leading space. A text made of such words has one token per word,
// and each word is a pre-tokenization piece of its own (a space followed
// by letters starts a piece under every byte-level BPE split pattern), so
// byte-pair merges never cross from one word to the next: the text of a
// sequence of words encodes to exactly the sequence of their tokens,
// whatever precedes or follows it.
//
// Each word is kept in a 16-byte slot so that a prompt is written with one
// fixed-size copy per word.
type words struct {
	slot [][wordSlot]byte
	size []uint8
}

// wordSlot is the longest word kept, with its space, in bytes.
const wordSlot = 16

var (
	wordsMu    sync.Mutex
	wordsCache = map[string]*words{} // tokenizer name → block vocabulary
)

// blockWords returns tok's block vocabulary, building it once per tokenizer
// name. The build checks the property the prompts rely on by encoding every
// word after every other word of a sample text and comparing with the
// words' own tokens; words that merge with a neighbour are dropped.
func blockWords(tok tokenizer.Tokenizer) (*words, error) {
	wordsMu.Lock()
	defer wordsMu.Unlock()
	if w, ok := wordsCache[tok.Name()]; ok {
		return w, nil
	}
	seen := map[string]bool{}
	var list []string
	var ids []int
	for _, w := range strings.FieldsFunc(corpus, func(r rune) bool { return r < 'a' || r > 'z' }) {
		if seen[w] || len(w) >= wordSlot {
			continue
		}
		seen[w] = true
		if t := tok.Encode(" " + w); len(t) == 1 {
			list = append(list, " "+w)
			ids = append(ids, t[0])
		}
	}
	list, ids = checkWords(tok, list, ids)
	if len(list) < minWords {
		return nil, fmt.Errorf("tokenizer %s: only %d corpus words encode to one token each after a space (need %d): prompts cannot be built from hash ids",
			tok.Name(), len(list), minWords)
	}
	w := &words{slot: make([][wordSlot]byte, len(list)), size: make([]uint8, len(list))}
	for i, s := range list {
		copy(w.slot[i][:], s)
		w.size[i] = uint8(len(s))
	}
	wordsCache[tok.Name()] = w
	return w, nil
}

// checkWords encodes the words in two orders (so each follows two
// different words) and drops, until none is left, any word whose token is
// not found where it should be.
func checkWords(tok tokenizer.Tokenizer, list []string, ids []int) ([]string, []int) {
	for range 20 {
		order := make([]int, 0, 2*len(list))
		for i := range list {
			order = append(order, i)
		}
		for i := range list {
			order = append(order, (i*7919+13)%len(list))
		}
		var text strings.Builder
		for _, i := range order {
			text.WriteString(list[i])
		}
		got := tok.Encode(text.String())
		bad := -1
		for k, i := range order {
			if k >= len(got) || got[k] != ids[i] {
				bad = i
				break
			}
		}
		if bad < 0 && len(got) == len(order) {
			return list, ids
		}
		if bad < 0 {
			bad = order[len(order)-1]
		}
		list, ids = slices.Delete(list, bad, bad+1), slices.Delete(ids, bad, bad+1)
	}
	return nil, nil
}

// Random streams of the word picks: a block's words are drawn from a PCG
// seeded with (seed ^ pickBlock, hash id), a row's fresh words from one
// seeded with (seed ^ pickFresh, row).
const (
	pickBlock uint64 = 0x626c6f636b // "block"
	pickFresh uint64 = 0x6672657368 // "fresh"
)

// hashPrompt returns the prompt of a trace row: inputLength tokens made of
// the blocks of hashIDs, blockSize words each, the last block cut so that
// the total is inputLength; words past the blocks (a weka trace's
// unshared tail; a trace row's input_length may not run past its blocks:
// checkHashIDs) and the whole prompt of a row without hash ids are fresh
// words keyed by row. Every block is a function of (seed, hash id)
// alone, so it is identical wherever its id appears and across runs with
// the same seed, and a cut block is the first words of the full one. The
// caller has checked the lengths with checkHashIDs.
func (w *words) hashPrompt(seed int64, hashIDs []int64, inputLength, blockSize int, row uint64) string {
	bufp := scratch.Get().(*[]byte)
	buf := *bufp
	if need := (inputLength + 1) * wordSlot; cap(buf) < need {
		buf = make([]byte, need)
	}
	buf = buf[:cap(buf)]
	n, done := 0, 0
	for _, id := range hashIDs {
		if done >= inputLength {
			break // ids past the input's length add no words
		}
		k := min(blockSize, inputLength-done)
		n = w.write(buf, n, rand.NewPCG(uint64(seed)^pickBlock, uint64(id)), k)
		done += k
	}
	n = w.write(buf, n, rand.NewPCG(uint64(seed)^pickFresh, row), inputLength-done)
	prompt := string(buf[:n])
	if cap(buf) <= maxScratch {
		*bufp = buf
		scratch.Put(bufp)
	}
	return prompt
}

// write writes the first k words drawn from src into buf at n, one slot
// copy per word (buf has a slot to spare), and returns the new end. Each
// draw picks two words, one per 32-bit half.
func (w *words) write(buf []byte, n int, src *rand.PCG, k int) int {
	count := uint64(len(w.slot))
	for pos := 0; pos < k; pos += 2 {
		h := src.Uint64()
		i := (h & math.MaxUint32) * count >> 32
		*(*[wordSlot]byte)(buf[n:]) = w.slot[i]
		n += int(w.size[i])
		if pos+1 < k {
			j := (h >> 32) * count >> 32
			*(*[wordSlot]byte)(buf[n:]) = w.slot[j]
			n += int(w.size[j])
		}
	}
	return n
}

// scratch holds the buffers prompts are written in; buffers larger than
// maxScratch are not kept.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

const maxScratch = 4 << 20

// checkHashIDs checks that hash ids fit an input length as AIPerf does
// (PromptGenerator._build_token_sequence): every block but the last is
// full and the last holds 1 to blockSize tokens. An input longer than its
// blocks cover is refused too: it is a trace replayed with the wrong
// --prompt-input-tokens-block-size, whose prefix sharing would be lost.
func checkHashIDs(inputLength int64, hashIDs []int64, blockSize int) string {
	m, b := int64(len(hashIDs)), int64(blockSize)
	if m == 0 {
		return ""
	}
	last := inputLength - (m-1)*b
	if last > 0 && last <= b {
		return ""
	}
	return fmt.Sprintf("input length: %d, hash ids: %s, block size: %d are not compatible: the final hash block size: %d must be greater than 0 and less than or equal to %d (%d hash ids need an input_length of %d to %d: replay a trace with the block size it was made with, --prompt-input-tokens-block-size)",
		inputLength, briefIDs(hashIDs), blockSize, last, blockSize, m, (m-1)*b+1, m*b)
}

// briefIDs prints at most 8 hash ids.
func briefIDs(ids []int64) string {
	if len(ids) <= 8 {
		return fmt.Sprint(ids)
	}
	return fmt.Sprintf("%v … (%d ids)", ids[:8], len(ids))
}
