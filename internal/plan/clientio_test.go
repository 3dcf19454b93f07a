package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRxCoalesceUsecs(t *testing.T) {
	p := valid()
	require.NoError(t, p.Check())
	assert.Equal(t, 20*time.Microsecond, p.RxCoalesce(), "the default")

	p.RxCoalesceUsecs = Ptr(0)
	require.NoError(t, p.Check())
	assert.Zero(t, p.RxCoalesce(), "0 turns it off")

	p.RxCoalesceUsecs = Ptr(250)
	require.NoError(t, p.Check())
	assert.Equal(t, 250*time.Microsecond, p.RxCoalesce())

	for _, bad := range []int{-1, 1001} {
		p.RxCoalesceUsecs = Ptr(bad)
		require.ErrorContains(t, p.Check(), "--rx-coalesce-usecs must be between 0 (off) and 1000 µs, got")
	}
}
