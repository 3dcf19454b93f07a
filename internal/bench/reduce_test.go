package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// Every metric --goodput accepts is a record metric the summary computes.
func TestGoodputTagsAreRecordMetrics(t *testing.T) {
	for _, tag := range plan.GoodputTags {
		assert.Contains(t, metrics.RecordTags(), tag)
	}
}
