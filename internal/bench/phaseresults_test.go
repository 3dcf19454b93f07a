package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

func TestPhaseRecords(t *testing.T) {
	rec := func(phase string, index int) metrics.Record { return metrics.Record{Phase: phase, Index: index} }
	indexes := func(recs []metrics.Record) []int {
		var out []int
		for _, r := range recs {
			out = append(out, r.Index)
		}
		return out
	}

	together := []metrics.Record{rec("warm", 0), rec("warm", 1), rec("main", 2), rec("main", 3)}
	recs, buf := phaseRecords(together, "main", nil)
	assert.Equal(t, []int{2, 3}, indexes(recs))
	assert.Same(t, &together[2], &recs[0], "records that lie together are not copied")
	assert.Nil(t, buf)

	mixed := []metrics.Record{rec("warm", 0), rec("main", 1), rec("warm", 2), rec("main", 3), rec("tail", 4)}
	recs, buf = phaseRecords(mixed, "warm", nil)
	assert.Equal(t, []int{0, 2}, indexes(recs))
	recs, buf = phaseRecords(mixed, "main", buf)
	assert.Equal(t, []int{1, 3}, indexes(recs))
	assert.Equal(t, 2, cap(buf), "the second phase's copy reuses the first's buffer")
	recs, _ = phaseRecords(mixed, "tail", buf)
	assert.Equal(t, []int{4}, indexes(recs))

	recs, _ = phaseRecords(mixed, "none", buf)
	assert.Empty(t, recs)
}
