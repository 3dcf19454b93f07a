package termsafe

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
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

	out.Reset()
	_, err = Raw(w).Write([]byte("\x1b[2K\r"))
	require.NoError(t, err)
	assert.Equal(t, "\x1b[2K\r", out.String(), "Raw writes unescaped")
	assert.Same(t, w, Writer(w), "wrapping twice is one wrapper")
	assert.Same(t, &out, Raw(&out))
	assert.Same(t, os.Stderr, Raw(Writer(os.Stderr)), "a file is handed out as it is (a terminal stays recognisable)")
}

// TestRawSharesTheWritersLock writes through a Writer and its Raw at once
// (a progress line beside log lines): under -race a buffer written by
// both must see one write at a time.
func TestRawSharesTheWritersLock(t *testing.T) {
	var out bytes.Buffer
	w := Writer(&out)
	raw := Raw(w)
	var wg sync.WaitGroup
	for _, dst := range []io.Writer{w, raw} {
		wg.Go(func() {
			for range 200 {
				_, _ = dst.Write([]byte("line\n"))
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 400, strings.Count(out.String(), "line\n"))
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

// wrapping is a writer around another that says so, as a redaction is.
type wrapping struct{ io.Writer }

func (w wrapping) Unwrap() io.Writer { return w.Writer }

// TestFileUnderWrappers: the file under the escaping, a lock and any
// writer that says what it wraps is found; a buffer is no file.
func TestFileUnderWrappers(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer f.Close()
	assert.Same(t, f, File(Writer(wrapping{Writer(f)})))
	assert.Nil(t, File(wrapping{&strings.Builder{}}))
}
