package dataset

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// ConversationContext is ds.Conversation(i), or ctx's error once ctx is
// done: a dataset that can stop reading midway (a file's, whose record may
// hold 256 MiB of text to count) stops there, so that an interrupted run
// is not held up by the record it was reading; another one is asked ctx
// before it reads.
func ConversationContext(ctx context.Context, ds Dataset, i int) (Conversation, error) {
	if r, ok := ds.(interface {
		ConversationContext(context.Context, int) (Conversation, error)
	}); ok {
		return r.ConversationContext(ctx, i)
	}
	if err := ctx.Err(); err != nil {
		return Conversation{}, fmt.Errorf("read conversation %d: %w", i, err)
	}
	return ds.Conversation(i)
}

// ctxTok counts under ctx: once ctx is done it counts nothing more (0)
// and keeps ctx's error, which the conversation being read returns. A
// long text's count is kept in cache (nil: none). It is one read's, not
// safe for concurrent use.
type ctxTok struct {
	tokenizer.Tokenizer
	ctx   context.Context
	cache *countCache
	err   error
}

func (t *ctxTok) Count(text string) int {
	if t.err != nil {
		return 0
	}
	if n, ok := t.cache.get(text); ok {
		return n
	}
	n, err := tokenizer.CountContext(t.ctx, t.Tokenizer, text)
	if t.err = err; err == nil {
		t.cache.put(text, n)
	}
	return n
}

// cachedText is the length from which a text's token count is kept.
const cachedText = 1 << 20

// countCache keeps the token counts of the long texts of a dataset, by a
// 64-bit hash of the text (hashing is some thousand times faster than
// counting): a conversation read again (the next draw of the same
// record, inputs.json after the run) is not counted again, which for a
// record of 256 MiB is minutes. One entry per text of at least
// cachedText, so its size is a small fraction of the file's.
type countCache struct {
	once sync.Once
	seed maphash.Seed
	m    sync.Map // hash → count
}

func (c *countCache) key(text string) uint64 {
	c.once.Do(func() { c.seed = maphash.MakeSeed() })
	return maphash.String(c.seed, text)
}

func (c *countCache) get(text string) (int, bool) {
	if c == nil || len(text) < cachedText {
		return 0, false
	}
	n, ok := c.m.Load(c.key(text))
	if !ok {
		return 0, false
	}
	return n.(int), true
}

func (c *countCache) put(text string, n int) {
	if c != nil && len(text) >= cachedText {
		c.m.Store(c.key(text), n)
	}
}
