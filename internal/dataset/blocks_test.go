package dataset

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

const head200 = "testdata/mooncake_conversation_head200.jsonl"

type traceRow struct {
	InputLength int     `json:"input_length"`
	HashIDs     []int64 `json:"hash_ids"`
}

func readTrace(t *testing.T, path string) []traceRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows []traceRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r traceRow
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		rows = append(rows, r)
	}
	return rows
}

func commonPrefix[T comparable](a, b []T) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestHashPromptsTrace checks the trace's prompts under two tokenizers:
// each re-encodes to exactly input_length tokens, and two rows whose
// hash ids share their first j ids share exactly their first j×512 token
// ids (a chance match of a few more tokens is allowed, never a 16-token
// block a prefix cache could hit).
func TestHashPromptsTrace(t *testing.T) {
	rows := readTrace(t, head200)
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		t.Run(name, func(t *testing.T) {
			tok, err := tokenizer.Load(name)
			require.NoError(t, err)
			d, err := Open(context.Background(), tok, Options{InputFile: head200, Seed: 1})
			require.NoError(t, err)
			defer d.Close()
			require.Equal(t, len(rows), d.Len())
			ids := make([][]int, len(rows))
			for i, r := range rows {
				c, err := d.Conversation(i)
				require.NoError(t, err)
				require.Len(t, c.Turns, 1)
				ids[i] = tok.Encode(c.Turns[0].Text)
				require.Len(t, ids[i], r.InputLength, "row %d re-encodes to input_length", i+1)
				assert.Equal(t, r.InputLength, c.Turns[0].InputTokens)
			}
			shared := 0
			for i := range rows {
				for k := i + 1; k < len(rows); k++ {
					j := commonPrefix(rows[i].HashIDs, rows[k].HashIDs)
					want := min(j*512, len(ids[i]), len(ids[k]))
					got := commonPrefix(ids[i], ids[k])
					require.GreaterOrEqual(t, got, want, "rows %d and %d share %d hash ids", i+1, k+1, j)
					if want < len(ids[i]) && want < len(ids[k]) {
						require.Less(t, got, want+16, "rows %d and %d share only %d hash ids", i+1, k+1, j)
					}
					if j > 1 {
						shared++
					}
				}
			}
			assert.Positive(t, shared, "the trace has rows sharing more than the first block")
		})
	}
}
