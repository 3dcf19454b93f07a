package tokenizer

// addedTokens finds the added tokens of a tokenizer.json (such as <s> or
// <|im_start|>) in a text: Hugging Face matches them before normalization
// and pre-tokenization, leftmost-longest, as single tokens. They are kept
// in a byte trie, so that finding them costs a step or two a byte however
// many there are (Gemma 3 has 6,415).
type addedTokens struct {
	first [256]bool        // the first bytes of the tokens
	edges map[uint64]int32 // node<<8 | byte → child node; the root is node 0
	ids   []int32          // node → id of the token ending there, or -1
}

// newAddedTokens indexes the added tokens by their text; empty ones are
// ignored.
func newAddedTokens(ids map[string]int) addedTokens {
	a := addedTokens{edges: map[uint64]int32{}, ids: []int32{-1}}
	for text, id := range ids {
		if text == "" {
			continue
		}
		a.first[text[0]] = true
		node := int32(0)
		for i := 0; i < len(text); i++ {
			key := uint64(node)<<8 | uint64(text[i])
			child, ok := a.edges[key]
			if !ok {
				child = int32(len(a.ids))
				a.edges[key] = child
				a.ids = append(a.ids, -1)
			}
			node = child
		}
		a.ids[node] = int32(id)
	}
	return a
}

// match returns the id and length of the longest added token that text
// starts with, or a length of 0.
func (a *addedTokens) match(text string) (id int32, n int) {
	node := int32(0)
	for i := 0; i < len(text); i++ {
		child, ok := a.edges[uint64(node)<<8|uint64(text[i])]
		if !ok {
			break
		}
		node = child
		if a.ids[node] >= 0 {
			id, n = a.ids[node], i+1
		}
	}
	return id, n
}

// split cuts text at the added tokens: it calls segment with each
// non-empty stretch between them (atStart tells whether it starts the
// text) and token with the id of each added token, in order.
func (a *addedTokens) split(text string, segment func(s string, atStart bool), token func(id int)) {
	last := 0
	if len(a.ids) > 1 {
		for i := 0; i < len(text); {
			if !a.first[text[i]] {
				i++
				continue
			}
			id, n := a.match(text[i:])
			if n == 0 {
				i++
				continue
			}
			if i > last {
				segment(text[last:i], last == 0)
			}
			token(int(id))
			i += n
			last = i
		}
	}
	if last < len(text) {
		segment(text[last:], last == 0)
	}
}
