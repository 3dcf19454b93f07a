package runner

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestEstimate(t *testing.T) {
	const per = time.Minute
	for _, c := range []struct {
		name            string
		slots           int
		running, queued []int
		want            time.Duration
	}{
		{"one at a time: every trial left", 1, []int{3}, nil, 3 * per},
		{"one at a time, lanes queued behind", 1, []int{1}, []int{2, 3}, 6 * per},
		{"two slots, the longest lane", 2, []int{4, 1}, nil, 4 * per},
		{"a queued lane takes the first free slot", 2, []int{4, 1}, []int{2}, 4 * per},
		{"queued lanes pile onto the free slots", 2, []int{1, 1}, []int{3, 3, 1}, 5 * per},
		{"a slot idle", 3, []int{2}, nil, 2 * per},
		{"nothing left", 2, nil, nil, 0},
	} {
		assert.Equal(t, c.want, estimate(per, c.slots, c.running, c.queued), c.name)
	}
}
