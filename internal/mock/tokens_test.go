package mock

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWordsAreSingleO200kTokens(t *testing.T) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("o200k_base")
	require.NoError(t, err)
	for _, w := range words {
		assert.Len(t, enc.EncodeOrdinary(w), 1, "%q", w)
	}
	for _, n := range []int{1, 2, 17, len(words), 3*len(words) + 5} {
		var b strings.Builder
		for k := range n {
			b.WriteString(word(k))
		}
		assert.Len(t, enc.EncodeOrdinary(b.String()), n, "%d pieces", n)
	}
}

func TestTokenSourceCache(t *testing.T) {
	calls := 0
	c := newTokenSource(nil, func(s string) int { calls++; return len(s) })
	assert.Equal(t, 3, c.Count("abc"))
	assert.Equal(t, 3, c.Count("abc"))
	assert.Len(t, c.ids("abc"), 3)
	assert.Equal(t, 1, calls)
	for i := range maxCachedPrompts + 10 {
		c.Count(strconv.Itoa(i))
	}
	assert.LessOrEqual(t, len(c.counts), maxCachedPrompts, "bounded")

	encodes := 0
	e := newTokenSource(func(s string) []int { encodes++; return make([]int, len(s)) }, nil)
	assert.Equal(t, 5, e.Count("hello"))
	assert.Len(t, e.ids("hello"), 5)
	assert.Equal(t, 1, encodes)
	big := strings.Repeat("x", maxCachedIDs/2+1)
	e.ids(big)
	e.ids(big + "y")
	assert.LessOrEqual(t, e.held, maxCachedIDs, "bounded in ids")
	assert.Len(t, e.encodedIDs, 1, "emptied when the next text would not fit")

	approx := newTokenSource(nil, nil)
	assert.Equal(t, 0, approx.Count(""))
	assert.Equal(t, 1, approx.Count("abc"))
	assert.Equal(t, 2, approx.Count("abcde"))
	assert.Equal(t, approx.ids("abcdefgh")[:1], approx.ids("abcdxyz")[:1], "a common 4-byte chunk is a common id")
	assert.NotEqual(t, approx.ids("abcdefgh")[1], approx.ids("abcdxyz")[1])
}
