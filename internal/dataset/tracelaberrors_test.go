package dataset

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openTLErr opens path as a tracelab corpus and returns Open's error.
func openTLErr(t *testing.T, path string) error {
	t.Helper()
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeTraceLab})
	require.Error(t, err)
	return err
}

// TestTraceLabBadRows: every malformed row is listed with its line, column
// or field, and what was expected; nothing is opened.
func TestTraceLabBadRows(t *testing.T) {
	good, err := json.Marshal(tlRow("claude:a", 0, 0, 1, 64, 0, 1, nil))
	require.NoError(t, err)
	badTime := tlRow("claude:a", 1, 0, 1, 64, 0, 1, nil)
	badTime["timing_events"] = []map[string]any{{"event_type": "text", "timestamp": "yesterday"}}
	badTool := tlRow("claude:a", 2, 0, 1, 64, 0, 1, nil)
	badTool["tools"] = []map[string]any{{"tool_name": "Agent", "emitted_at": "2026-13-01T00:00:00Z"}}
	lines := []string{string(good), `{oops`, mustJSON(t, badTime), `{"session_id": "claude:a", "input_tokens_total": "12"}`,
		`{"session_id": "claude:a", "output_tokens": -1}`, `[1, 2]`, mustJSON(t, badTool), "{\"session_id\": \"\xff\"}",
		`{"session_id": 7}`}
	for _, name := range []string{"bad.jsonl", "bad.jsonl.gz"} {
		err := openTLErr(t, writeTLText(t, name, []byte(strings.Join(lines, "\n")+"\n")))
		msg := err.Error()
		for _, want := range []string{"tracelab dataset: 8 problems:", name + ":2:2: invalid JSON near `{oops`",
			name + `:3: timing_events[0].timestamp: expected an ISO 8601 time (2026-01-01T00:00:00Z, or without a zone for UTC), got "yesterday"`,
			name + ":4:50: input_tokens_total: expected an integer, got a JSON string",
			name + ":5: output_tokens: expected a non-negative integer up to 16777216, got -1",
			name + ":6:1: expected a JSON object, got a list",
			name + `:7: tools[0].emitted_at: expected an ISO 8601 time`,
			name + ":8:17: invalid UTF-8 (byte 0xff)",
			name + ":9:16: session_id: expected a string, got a JSON number"} {
			assert.Contains(t, msg, want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestTraceLabBadFiles: a corpus without sessions, with colliding ids, a
// truncated gzip stream or more text than the cap once inflated (a gzip
// bomb) is refused with what is wrong.
func TestTraceLabBadFiles(t *testing.T) {
	err := openTLErr(t, writeTL(t, "none.jsonl", []map[string]any{{"round_index": 0}}))
	assert.ErrorContains(t, err, "none.jsonl: no TraceLab sessions found in '")
	assert.ErrorContains(t, err, "every row must carry a 'session_id'")

	err = openTLErr(t, writeTL(t, "dup.jsonl", []map[string]any{tlRow("claude:a", 0, 0, 1, 64, 0, 1, nil), tlRow("claude/a", 0, 0, 1, 64, 0, 1, nil)}))
	assert.ErrorContains(t, err, "dup.jsonl:2: session_id: duplicate TraceLab trace id 'claude_a': session 'claude/a' collides with an earlier session ('claude:a')")

	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	for i := range 200 {
		_, err := w.Write([]byte(mustJSON(t, tlRow("claude:a", i, float64(i), float64(i)+1, 64, 0, 1, nil)) + "\n"))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	trunc := writeTLText(t, "trunc.jsonl", z.Bytes()[:z.Len()-30])
	err = openTLErr(t, trunc)
	assert.ErrorContains(t, err, "tracelab dataset: cannot read TraceLab file "+trunc+": read line")
	assert.ErrorContains(t, err, "unexpected EOF")

	bomb := writeTLText(t, "bomb.jsonl.gz", bytes.Repeat([]byte(" "), 1<<20))
	saved := traceLabMaxBytes
	traceLabMaxBytes = 64 << 10
	t.Cleanup(func() { traceLabMaxBytes = saved })
	st, err := os.Stat(bomb)
	require.NoError(t, err)
	require.Less(t, st.Size(), int64(4<<10), "1 MiB of spaces gzips to a few KB")
	err = openTLErr(t, bomb)
	assert.ErrorContains(t, err, bomb+": more than 0 MiB of JSONL text (decompressed): a gzip bomb, or a corpus larger than tracelab replay reads")

	// A valid row, then blank lines that inflate a thousandfold: refused
	// once past traceLabBombAfter, long before the text cap.
	traceLabMaxBytes = saved
	savedAfter := traceLabBombAfter
	traceLabBombAfter = 1 << 20
	t.Cleanup(func() { traceLabBombAfter = savedAfter })
	blank := writeTLText(t, "blank.jsonl.gz", append([]byte(mustJSON(t, tlRow("claude:a", 0, 0, 1, 64, 0, 1, nil))+"\n"),
		bytes.Repeat([]byte("\n"), 8<<20)...))
	assert.ErrorContains(t, openTLErr(t, blank), blank+": a gzip bomb: past 1 MiB its text inflates more than 500-fold")
}

// TestTraceLabSpanBeyondAYear: a session dated decades from the others (a
// clock reset to 1970) would hold every other session back for decades on
// the corpus's clock: the corpus is refused, naming both ends.
func TestTraceLabSpanBeyondAYear(t *testing.T) {
	zeroed := tlRow("claude:zeroed", 0, 0, 1, 64, 0, 1, nil)
	zeroed["timing_events"] = []map[string]any{{"event_type": "user_message", "timestamp": "1970-01-01T00:00:00Z"},
		{"event_type": "text", "timestamp": "1970-01-01T00:00:01Z"}}
	text := mustJSON(t, tlRow("claude:a", 0, 0, 1, 64, 0, 1, nil)) + "\n" + mustJSON(t, zeroed) + "\n"
	msg := openTLErr(t, writeTLText(t, "span.jsonl", []byte(text))).Error()
	assert.Contains(t, msg, "span.jsonl:2: timing_events: the corpus's rounds span")
	assert.Contains(t, msg, "years, from session \"claude:zeroed\" at 1970-01-01T00:00:00Z to session \"claude:a\" (line 1)")
	assert.Contains(t, msg, "beyond the year a replay may last")
}

// TestTraceLabSessionCap: a corpus of more sessions than the reader holds
// is refused at the first row past the cap (bare session ids gzip tenfold,
// so the text cap alone would let such a corpus hold gigabytes).
func TestTraceLabSessionCap(t *testing.T) {
	saved := traceLabMaxSessions
	traceLabMaxSessions = 3
	t.Cleanup(func() { traceLabMaxSessions = saved })
	var text strings.Builder
	for i := range 5 {
		text.WriteString(mustJSON(t, tlRow(fmt.Sprintf("claude:s%d", i), 0, float64(i), float64(i)+1, 64, 0, 1, nil)) + "\n")
	}
	msg := openTLErr(t, writeTLText(t, "many.jsonl", []byte(text.String()))).Error()
	assert.Contains(t, msg, "many.jsonl:4: more than 3 sessions: more than tracelab replay holds")
}
