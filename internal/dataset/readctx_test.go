package dataset

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/ctxtest"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// hugeRow is a record of 8 MiB of one character: counting it looks at ctx
// many times.
func hugeRow(key string) string {
	return `{"` + key + `":"` + strings.Repeat("a", 8<<20) + `","output_length":1}`
}

// TestConversationContextStopsCounting: reading back a record whose text
// is long stops counting its tokens once ctx is done, with ctx's error; read
// with a live ctx it is the same as Conversation.
func TestConversationContextStopsCounting(t *testing.T) {
	for kind, key := range map[string]string{TypeSingleTurn: "text", TypeMooncakeTrace: "text_input"} {
		t.Run(kind, func(t *testing.T) {
			path := writeFile(t, "huge.jsonl", hugeRow(key))
			d, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: kind})
			require.NoError(t, err)
			defer d.Close()
			ctx := ctxtest.NewDoneAfter(5) // some looks into the count
			_, err = ConversationContext(ctx, d, 0)
			require.Error(t, err)
			assert.True(t, errors.Is(err, context.Canceled), "%v", err)
			assert.Equal(t, int64(5), ctx.Looks(), "read on after ctx was done")

			got, err := ConversationContext(context.Background(), d, 0)
			require.NoError(t, err)
			assert.Equal(t, o200k(t).Count(strings.Repeat("a", 8<<20)), got.Turns[0].InputTokens)
		})
	}
}

// countingTok counts the texts it is asked to count.
type countingTok struct {
	tokenizer.Tokenizer
	calls atomic.Int64
}

func (c *countingTok) Count(text string) int {
	c.calls.Add(1)
	return c.Tokenizer.Count(text)
}

// TestLongTextCountedOnce: a record's long text is counted once, however
// often its conversation is read (each draw of it, inputs.json after the
// run); a short one each time.
func TestLongTextCountedOnce(t *testing.T) {
	long, short := strings.Repeat("ab ", cachedText/3+1), "a short prompt"
	path := writeFile(t, "rows.jsonl", `{"text":"`+long+`"}`, `{"text":"`+short+`"}`)
	tok := &countingTok{Tokenizer: o200k(t)}
	d, err := Open(context.Background(), tok, Options{InputFile: path})
	require.NoError(t, err)
	defer d.Close()
	for range 3 {
		c, err := d.Conversation(0)
		require.NoError(t, err)
		assert.Equal(t, o200k(t).Count(long), c.Turns[0].InputTokens)
	}
	assert.Equal(t, int64(1), tok.calls.Load(), "the long text was counted again")
	for range 2 {
		_, err := d.Conversation(1)
		require.NoError(t, err)
	}
	assert.Equal(t, int64(3), tok.calls.Load())
}

// TestOpenStopsInAHugeFirstRecord: detecting the type of a file whose
// first record is huge looks at ctx between its passes over the record and
// while reading it, so an interrupt does not wait for them all.
func TestOpenStopsInAHugeFirstRecord(t *testing.T) {
	path := writeFile(t, "huge.jsonl", hugeRow("text"))
	for _, n := range []int64{1, 2, 4, 8} {
		ctx := ctxtest.NewDoneAfter(n)
		_, err := Open(ctx, o200k(t), Options{InputFile: path})
		require.Error(t, err, "done at look %d", n)
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
		assert.Equal(t, n, ctx.Looks(), "read on after ctx was done")
	}
}
