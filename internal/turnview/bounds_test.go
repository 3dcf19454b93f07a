package turnview

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hugeLine is the size of the message of TestHugeLineBoundedMemory.
const hugeLine = 48 << 20

// writeHuge writes an export whose second line is a request of a single
// message of hugeLine characters (and as many bytes of responses),
// between two small ones, without holding it in memory.
func writeHuge(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, RawFile))
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	require.NoError(t, enc.Encode(req{conv: "small", corr: "s1", start: 1, msgs: []any{user("hi")}}.line()))
	chunk := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	_, err = w.WriteString(`{"metadata":{"conversation_id":"huge","x_correlation_id":"s2","turn_index":0,"request_start_ns":2},` +
		`"payload":{"model":"m","messages":[{"role":"user","content":"`)
	require.NoError(t, err)
	for range hugeLine / len(chunk) {
		_, err = w.WriteString(chunk)
		require.NoError(t, err)
	}
	_, err = w.WriteString(`"}]},"responses":[{"perf_ns":3,"text":"`)
	require.NoError(t, err)
	for range hugeLine / len(chunk) {
		_, err = w.WriteString(chunk)
		require.NoError(t, err)
	}
	_, err = w.WriteString("\"}]}\n")
	require.NoError(t, err)
	require.NoError(t, enc.Encode(req{conv: "small2", corr: "s3", start: 3, msgs: []any{user("bye")}}.line()))
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	return dir
}

// allocated is how many bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHugeLineBoundedMemory: a line of a hundred megabytes is read
// through the fixed buffer, streamed: what the viewer allocates to read
// and render it is a small fraction of the line (the body kept is cut at
// the cap), whether the line is shown or skipped.
func TestHugeLineBoundedMemory(t *testing.T) {
	dir := writeHuge(t)
	opt := defaults
	opt.ContentCap = 1000
	var v *View
	var page string
	n := allocated(func() {
		v = build(t, dir, opt)
		page = render(t, v)
	})
	t.Logf("read and rendered a line of %d bytes, allocating %d", 2*hugeLine, n)
	assert.Less(t, n, uint64(hugeLine/8), "allocated %d bytes for a line of %d", n, 2*hugeLine)
	require.Equal(t, []string{"small", "huge", "small2"}, ids(v))
	m := v.Msgs[v.Convs[1].Turns[0].Messages[0]]
	assert.Equal(t, hugeLine, m.Len)
	assert.Equal(t, 1000, len(m.Body))
	assert.Equal(t, hugeLine-1000, m.Cut)
	assert.Less(t, len(page), 64<<10)

	opt.LimitConversations = 1 // the huge line is skipped by the second pass
	n = allocated(func() { v = build(t, dir, opt) })
	assert.Less(t, n, uint64(hugeLine/8), "allocated %d bytes", n)
	assert.Equal(t, []string{"small"}, ids(v))
}
