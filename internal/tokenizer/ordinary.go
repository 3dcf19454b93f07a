package tokenizer

import (
	"fmt"
	"slices"
)

// Ordinary returns the ids of t's ordinary tokens, in ascending order: its
// vocabulary without the special and added tokens (<|endoftext|>, <s>,
// [CLS], …). It is the pool `vllm bench serve` draws its random prompts
// from (the vocabulary less the tokenizer's special ids).
func Ordinary(t Tokenizer) ([]int, error) {
	o, ok := t.(interface{ ordinary() []int })
	if !ok {
		return nil, fmt.Errorf("tokenizer %s does not list its vocabulary", t.Name())
	}
	ids := o.ordinary()
	if len(ids) == 0 {
		return nil, fmt.Errorf("tokenizer %s has no ordinary tokens", t.Name())
	}
	return ids, nil
}

// Vocabulary returns every id of t, in ascending order: its ordinary
// tokens and its special and added tokens too. It is the pool sglang's
// random-ids prompts draw from (no special-token exclusion), where Ordinary
// is vLLM's.
func Vocabulary(t Tokenizer) ([]int, error) {
	o, ok := t.(interface{ every() []int })
	if !ok {
		return nil, fmt.Errorf("tokenizer %s does not list its vocabulary", t.Name())
	}
	ids := o.every()
	if len(ids) == 0 {
		return nil, fmt.Errorf("tokenizer %s has no tokens", t.Name())
	}
	return ids, nil
}

// withExtra adds extra to the ascending ids, keeping them ascending and
// distinct.
func withExtra(ids []int, extra []int) []int {
	ids = append(ids, extra...)
	slices.Sort(ids)
	return slices.Compact(ids)
}

// ordinaryOf lists the ids of v less those special reports, ascending.
func ordinaryOf(v *vocab, special func(id int) bool) []int {
	ids := make([]int, 0, v.len())
	for _, id := range v.all() {
		if !special(int(id)) {
			ids = append(ids, int(id))
		}
	}
	slices.Sort(ids)
	return ids
}

func (b *bpe) ordinary() []int {
	added := map[int]bool{}
	for _, id := range b.added.ids {
		if id >= 0 {
			added[int(id)] = true
		}
	}
	return ordinaryOf(b.enc.ranks, func(id int) bool {
		_, sp := b.enc.specials[id]
		return sp || added[id]
	})
}

func (b *bpe) every() []int {
	var extra []int
	for id := range b.enc.specials {
		extra = append(extra, id)
	}
	for _, id := range b.added.ids {
		if id >= 0 {
			extra = append(extra, int(id))
		}
	}
	return withExtra(ordinaryOf(b.enc.ranks, func(int) bool { return false }), extra)
}

func (p *pipeline) ordinary() []int {
	v, ok := p.model.(interface{ vocabulary() *vocab })
	if !ok {
		return nil
	}
	return ordinaryOf(v.vocabulary(), func(id int) bool {
		_, added := p.addedText[id]
		return added
	})
}

func (p *pipeline) every() []int {
	v, ok := p.model.(interface{ vocabulary() *vocab })
	if !ok {
		return nil
	}
	var extra []int
	for id := range p.addedText {
		extra = append(extra, id)
	}
	return withExtra(ordinaryOf(v.vocabulary(), func(int) bool { return false }), extra)
}

func (m *mergesModel) vocabulary() *vocab { return m.vocab }

func (w *wordPiece) vocabulary() *vocab { return w.vocab }
