package htmlreport

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStat: a search table's statistic has two decimals, a huge one in
// scientific notation (not 300 digits in a cell), and one that is not a
// finite number a dash.
func TestStat(t *testing.T) {
	assert.Equal(t, "12.35", stat(12.345))
	assert.Equal(t, "1.00e+300", stat(1e300))
	assert.Equal(t, "—", stat(math.Inf(1)))
}
