package runner

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A cooldown in seconds converts to a Duration without wrapping around: a
// huge or infinite one is the longest Duration, never a negative one (which
// would mean no pause at all).
func TestSecondsDoesNotOverflow(t *testing.T) {
	assert.Equal(t, 2*time.Second, seconds(2))
	assert.Equal(t, 1500*time.Millisecond, seconds(1.5))
	assert.Equal(t, time.Duration(0), seconds(0))
	assert.Equal(t, time.Duration(0), seconds(-3))
	assert.Equal(t, time.Duration(0), seconds(math.NaN()))
	for _, x := range []float64{1e10, 1e18, math.MaxFloat64, math.Inf(1)} {
		assert.Equal(t, time.Duration(math.MaxInt64), seconds(x), "%g", x)
	}
	assert.Equal(t, time.Duration(31536000)*time.Second, seconds(31536000), "the longest cooldown allowed, one year")
}
