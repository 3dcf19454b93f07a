package numfmt

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFixed(t *testing.T) {
	assert.Equal(t, "1234.5000", Fixed(1234.5, 4), "an ordinary value keeps its decimals")
	assert.Equal(t, "999999999999999.88", Fixed(999999999999999.875, 2), "just below Huge: fixed")
	assert.Equal(t, "1.00e+15", Fixed(1e15, 2))
	assert.Equal(t, "1.00e+300", Fixed(1e300, 2))
	assert.Equal(t, "-6.0000e+300", Fixed(-6e300, 4))
	assert.Equal(t, "+Inf", Fixed(math.Inf(1), 2), "strconv's form: Text writes n/a")
	for _, v := range []float64{1e300, 6e300, -1.5e200, 1e15} {
		got, err := strconv.ParseFloat(Fixed(v, 4), 64)
		assert.NoError(t, err, "a CSV reader parses %s", Fixed(v, 4))
		assert.InEpsilon(t, v, got, 1e-4)
	}
	for _, v := range []float64{math.MaxFloat64, -math.MaxFloat64, 123456789012345.67} {
		assert.LessOrEqual(t, len(Fixed(v, 4)), 22, "%g stays short", v)
	}
}

func TestText(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		assert.Equal(t, NA, Text(v, 2))
		assert.Equal(t, NA, Grouped(v, 2))
		assert.Nil(t, Null(v))
	}
	assert.Equal(t, "0.50", Text(0.5, 2))
	assert.Equal(t, 2.5, Null(2.5))
}

func TestGrouped(t *testing.T) {
	assert.Equal(t, "1,234,567.89", Grouped(1234567.891, 2))
	assert.Equal(t, "-1,000.00", Grouped(-1000, 2))
	assert.Equal(t, "999.00", Grouped(999, 2))
	assert.Equal(t, "1,000", Grouped(1000, 0))
	assert.Equal(t, "1.00e+300", Grouped(1e300, 2), "huge: scientific, no separators")
}

func TestWhole(t *testing.T) {
	s, ok := Whole(42)
	assert.True(t, ok)
	assert.Equal(t, "42", s)
	for _, v := range []float64{1.5, 1e300, math.Inf(1), math.NaN()} {
		_, ok := Whole(v)
		assert.False(t, ok, "%g is not a count to write whole", v)
	}
}
