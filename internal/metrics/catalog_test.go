package metrics

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCatalogNamesKnownMetrics: every metric the catalog places or judges
// is one this package defines, every defined metric has a header and a
// unit, and every console group has a table.
func TestCatalogNamesKnownMetrics(t *testing.T) {
	for tag, in := range catalog {
		assert.True(t, Known(tag), "catalog names unknown metric %s", tag)
		if in.group != GroupNone {
			assert.True(t, slices.Contains(ConsoleGroups, in.group), "%s: group %q has no table", tag, in.group)
		}
	}
	for _, d := range append(recordDefs[:], scalarDefs[:]...) {
		assert.NotEmpty(t, d.header, d.tag)
		assert.NotEmpty(t, d.unit, d.tag)
	}
	seen := map[string]bool{}
	for _, tag := range append(RecordTags(), ScalarTags()...) {
		assert.False(t, seen[tag], "%s defined twice", tag)
		seen[tag] = true
	}
}

// TestGoodputFloorsFollowTheDirection: an SLO on a metric where larger is
// better (e2e_output_token_throughput) is a floor, one on a latency a
// ceiling.
func TestGoodputFloorsFollowTheDirection(t *testing.T) {
	records := summaryRecords()[:3] // latencies 14, 25 and 30 ms; e2e throughputs 3/14 ms, 2/25 ms, 1/30 ms
	good := func(slos ...SLO) float64 {
		return metric(t, Summarize(records, true, slos...), TagGoodRequestCount).Value
	}
	assert.Equal(t, 1.0, good(SLO{Tag: TagE2EOutputThroughput, Value: 100}), "only 214 tokens/s clears 100")
	assert.Equal(t, 2.0, good(SLO{Tag: TagRequestLatency, Value: 25}), "14 and 25 ms are within 25")
}
