package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The filter passes whole warning and note lines, with their indented
// continuations, however the writes split them, and nothing else.
func TestNoticesPassWarningsAndNotes(t *testing.T) {
	var out strings.Builder
	w := notices(&out)
	for _, p := range []string{"tokens counted with o200k", "_base\nwar", "ning: the reset was not verified\n",
		"  its detail\nreset kv cache: 200 OK\n  not this\nnote: --streaming is ignored\n", "note: unfinished"} {
		n, err := w.Write([]byte(p))
		require.NoError(t, err)
		assert.Equal(t, len(p), n)
	}
	assert.Equal(t, "warning: the reset was not verified\n  its detail\nnote: --streaming is ignored\n", out.String())
}

// A line without an end is kept to 64 KiB: an endless one does not grow
// the client.
func TestNoticesBoundAnUnendedLine(t *testing.T) {
	var out strings.Builder
	w := notices(&out)
	chunk := []byte("note: " + strings.Repeat("x", 1<<20))
	for range 8 {
		_, err := w.Write(chunk)
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, cap(w.(*noticeFilter).partial), 128<<10)
	_, err := w.Write([]byte("\n"))
	require.NoError(t, err)
	assert.Len(t, out.String(), 64<<10+1)
}
