package traceanalysis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On traces whose ids do not name their prefix (an id after different
// ids, at different positions, twice in a row, past position 65,534),
// every figure is what AIPerf's definitions give, computed here the plain
// way (plainly).
func TestAnalyzeIrregularIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	rows := make([][]int64, 300)
	for i := range rows {
		for range 1 + r.IntN(6) {
			rows[i] = append(rows[i], int64(r.IntN(12)))
		}
	}
	long := make([]int64, 70000) // positions past 16 bits, some ids first seen there
	for i := range long {
		long[i] = int64(i % 3)
		if i >= 65000 {
			long[i] = int64(1000 + i%1000)
		}
	}
	rows = append(rows, long, long)
	lines := make([]string, len(rows))
	for i, ids := range rows {
		lines[i] = fmt.Sprintf(`{"input_length": %d, "hash_ids": %s}`, len(ids), strings.ReplaceAll(fmt.Sprint(ids), " ", ","))
	}
	got, err := Analyze(context.Background(), write(t, lines...), Options{BlockSize: 1})
	require.NoError(t, err)

	pairs := map[[2]int64]int{}
	for _, ids := range rows {
		for pos, id := range ids {
			pairs[[2]int64{int64(pos), id}]++
		}
	}
	context := 0.0
	for _, ids := range rows {
		repeated := 0
		for pos, id := range ids {
			if pairs[[2]int64{int64(pos), id}] > 1 {
				repeated++
			}
		}
		context += float64(repeated) / float64(len(rows)) // block size 1: all repeated or not, repeated tokens
	}
	want := plainly(rows)
	assert.Equal(t, want.prefixes, got.UniquePrefixes)
	assert.InDelta(t, want.reuse, got.PrefixReuseRatio, 1e-12)
	assert.InDelta(t, want.hitRate, got.CacheHitRate, 1e-12)
	assert.InDelta(t, context, got.ContextStats.Mean, 1e-9)
}
