package main

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The neutral server's reply is what the pinned measurement says it is: a
// role chunk, neutralTokens one-token content chunks, a usage chunk and
// [DONE], each an SSE event of its own.
func TestNeutralChunks(t *testing.T) {
	chunks := neutralChunks()
	require.Len(t, chunks, neutralTokens+3)
	assert.Equal(t, "data: [DONE]\n\n", string(chunks[len(chunks)-1]))
	content, osl := 0, -1
	for i, c := range chunks[:len(chunks)-1] {
		data, ok := bytes.CutPrefix(c, []byte("data: "))
		require.True(t, ok, "chunk %d", i)
		require.True(t, bytes.HasSuffix(data, []byte("\n\n")), "chunk %d ends its event", i)
		var ch minimalChunk
		require.NoError(t, json.Unmarshal(data, &ch), "chunk %d", i)
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			content++
		}
		if ch.Usage != nil {
			osl = ch.Usage.CompletionTokens
		}
	}
	assert.Equal(t, neutralTokens, content)
	assert.Equal(t, neutralTokens, osl, "the usage chunk's completion_tokens")
}

// The counters of the pinned measurement read from this process's /proc.
func TestReadProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	c, err := readProc(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, c.switches, "a running test has switched at least once")
	assert.Positive(t, c.reads, "the test binary read its files")
	in, out, err := tcpSegments(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, in, int64(0))
	assert.GreaterOrEqual(t, out, int64(0))
}
