package compare

import "github.com/aiperf-go/aiperf/internal/servermetrics"

// ServerValueForTest is a run's value of a server key over its series.
func ServerValueForTest(series []servermetrics.Series, k Key) (float64, bool) {
	return serverValue(series, k)
}
