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
// way.
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

	prefixes, pairs := map[string]int{}, map[[2]int64]int{}
	seen := map[int64]bool{}
	hit, total := 0.0, 0
	for _, ids := range rows {
		k := 0
		for k < len(ids) && seen[ids[k]] {
			k++
		}
		hit += float64(k) / float64(len(ids))
		var key strings.Builder
		for pos, id := range ids {
			seen[id] = true
			fmt.Fprint(&key, id, ",")
			prefixes[key.String()]++
			pairs[[2]int64{int64(pos), id}]++
			total++
		}
	}
	reused := 0
	for _, n := range prefixes {
		if n > 1 {
			reused += n
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
	assert.Equal(t, len(prefixes), got.UniquePrefixes)
	assert.InDelta(t, float64(reused)/float64(total), got.PrefixReuseRatio, 1e-12)
	assert.InDelta(t, hit/float64(len(rows)), got.CacheHitRate, 1e-12)
	assert.InDelta(t, context, got.ContextStats.Mean, 1e-9)
}
