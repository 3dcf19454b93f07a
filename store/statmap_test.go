package store

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// TestStatMapKeepsOnlyWhatAMetricHas: a time-weighted metric has no p75,
// count nor sum (AIPerf's sweep-line results carry none): stored as 0,
// they were read back, listed and compared as measured zeros.
func TestStatMapKeepsOnlyWhatAMetricHas(t *testing.T) {
	st := &metrics.Stats{Avg: 1.4, Min: 1, Max: 2, P50: 1, P90: 2, P95: 2, P99: 2, Std: 0.5}
	got := statMap(metrics.Metric{Tag: metrics.TagEffectiveConcurrency, Stats: st})
	assert.Equal(t, map[string]float64{"avg": 1.4, "min": 1, "max": 2, "p50": 1, "p90": 2, "p95": 2, "p99": 2, "std": 0.5}, got)
	got = statMap(metrics.Metric{Tag: metrics.TagTTFT, Stats: st})
	assert.Contains(t, got, "p75", "every other distribution keeps every statistic")
	assert.Contains(t, got, "count")
}
