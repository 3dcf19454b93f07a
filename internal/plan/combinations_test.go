package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Combinations: a grid with the last list varying fastest, zip
// element-wise.
func TestCombinations(t *testing.T) {
	assert.Equal(t, [][]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}, Combinations([]int{2, 3}, false))
	assert.Equal(t, [][]int{{0, 0}, {1, 1}}, Combinations([]int{2, 2}, true))
	assert.Nil(t, Combinations(nil, false))
}
