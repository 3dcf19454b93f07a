package termsafe

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestText(t *testing.T) {
	tests := map[string]string{
		"plain text, ünïcödé, 漢字 and 👍": "plain text, ünïcödé, 漢字 and 👍",
		"\x1b[2J\x1b[Hcleared":          `\x1b[2J\x1b[Hcleared`,
		"\x1b]0;pwned title\a":          `\x1b]0;pwned title\x07`,
		"ok\rFAILED":                    `ok\rFAILED`,
		"two\nlines\tand tab":           `two\nlines\tand tab`,
		"del\x7f nul\x00 bs\b":          `del\x7f nul\x00 bs\x08`,
		"c1 csi \u009b31m nel \u0085":   `c1 csi \u009b31m nel \u0085`,
		"bidi \u202eevil\u202c \u2066x": `bidi \u202eevil\u202c \u2066x`,
		"line sep \u2028 para \u2029":   `line sep \u2028 para \u2029`,
		"bad utf8 \xff\xfe end":         `bad utf8 \xff\xfe end`,
		"a lone backslash \\x1b stays":  `a lone backslash \x1b stays`,
	}
	for in, want := range tests {
		got := Text(in)
		assert.Equal(t, want, got, "%q", in)
		assert.Equal(t, got, Text(got), "escaping twice changes nothing: %q", in)
		assert.False(t, strings.ContainsFunc(got, func(r rune) bool { return unsafe(r, false) }), "%q", got)
	}
	clean := "nothing to escape here"
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = Text(clean) }), "clean text is returned as is")
}

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	w := Writer(&out)
	_, err := w.Write([]byte("warning: server said \x1b[31mred\x1b[0m\r\n"))
	require.NoError(t, err)
	n, err := w.Write([]byte("tab\tkept, \u009b too\n"))
	require.NoError(t, err)
	assert.Equal(t, len("tab\tkept, \u009b too\n"), n, "the caller's byte count")
	assert.Equal(t, "warning: server said \\x1b[31mred\\x1b[0m\\r\ntab\tkept, \\u009b too\n", out.String())

	out.Reset()
	euro := []byte("€\n") // three bytes, then a newline
	for _, b := range euro {
		_, err := w.Write([]byte{b})
		require.NoError(t, err)
	}
	assert.Equal(t, "€\n", out.String(), "a character cut across writes is not mistaken for invalid bytes")

	assert.Same(t, &out, Raw(w), "Raw unwraps")
	assert.Same(t, w, Writer(w), "wrapping twice is one wrapper")
	assert.Same(t, &out, Raw(&out))
}

func BenchmarkText(b *testing.B) {
	clean := strings.Repeat("an ordinary error message from a server, ", 8)
	dirty := clean + "\x1b[2J"
	b.Run("clean", func(b *testing.B) {
		for range b.N {
			_ = Text(clean)
		}
	})
	b.Run("escape", func(b *testing.B) {
		for range b.N {
			_ = Text(dirty)
		}
	})
}
