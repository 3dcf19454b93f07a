package dataset_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// The dataset package reads every SPEED-Bench type the command line
// accepts, and no other (it keeps its own list: it does not import plan).
func TestSpeedBenchTypesMatchPlan(t *testing.T) {
	assert.Equal(t, plan.SpeedBenchTypes, dataset.SpeedBenchTypes)
}
