package tokenizer

import (
	"context"
	"fmt"
)

// CountContext is t.Count(text), or ctx's error once ctx is done. The
// tokenizers of this package count a long text in steps of some
// milliseconds, between which they look at ctx, so that an interrupted run
// stops counting at once, whatever the length of the text (a record may
// hold 256 MiB). Another Tokenizer counts in one go, ctx looked at before
// and after.
func CountContext(ctx context.Context, t Tokenizer, text string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	c, ok := t.(interface {
		countUntil(text string, stop func() bool) (int, bool)
	})
	if !ok {
		n := t.Count(text)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("count tokens: %w", err)
		}
		return n, nil
	}
	var err error
	n, done := c.countUntil(text, func() bool {
		err = ctx.Err()
		return err != nil
	})
	if !done {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	return n, nil
}

// countUntil is Count that gives up, with done false, as soon as stop
// returns true.
func (b *bpe) countUntil(text string, stop func() bool) (n int, done bool) {
	done = true
	b.added.split(text,
		func(s string, _ bool) {
			if s == "" || !done {
				return
			}
			var k int
			k, done = b.enc.countUntil(b.normal(s), stop)
			n += k
		},
		func(int) { n++ })
	return n, done
}

// countUntil is Count that gives up, with done false, as soon as stop
// returns true.
func (p *pipeline) countUntil(text string, stop func() bool) (int, bool) {
	ids, done := p.encodeUntil(text, stop)
	return len(ids), done
}
