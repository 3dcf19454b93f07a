package compare_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/store"
)

// A gauge's avg is its average over time: a run stored before the
// collector kept one (only AIPerf's mean of the samples, marks included)
// has no avg, and asking for it by the family's name says why.
func TestGaugeAvgIsOverTime(t *testing.T) {
	t.Parallel()
	running := func(stats map[string]float64) []store.RunRow {
		return []store.RunRow{{Server: []servermetrics.Series{{Source: "server", Endpoint: "a", Metric: "vllm:num_requests_running",
			Type: servermetrics.TypeGauge, Phase: "profiling", Stats: stats}}}}
	}
	none := func() ([]store.ServerMetric, error) { return nil, nil }
	k := keys(t, "server.vllm:num_requests_running.avg")

	newer := running(map[string]float64{"avg": 2, servermetrics.StatTimeWeightedAvg: 3.75, "max": 4})
	v, ok := compare.ServerValueForTest(newer[0].Server, k[0])
	require.True(t, ok)
	assert.Equal(t, 3.75, v, "not the samples' mean, 2")
	require.NoError(t, compare.CheckServerKeys(k, newer, none))

	older := running(map[string]float64{"avg": 2, "max": 4})
	_, ok = compare.ServerValueForTest(older[0].Server, k[0])
	assert.False(t, ok)
	assert.EqualError(t, compare.CheckServerKeys(k, older, none), "server.vllm:num_requests_running.avg: vllm:num_requests_running is a gauge: "+
		"its statistics are max (a gauge's avg is its average over time, which runs stored by older versions lack)")
}
