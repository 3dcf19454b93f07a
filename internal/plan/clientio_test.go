package plan

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRxCoalesceUsecs(t *testing.T) {
	p := valid()
	require.NoError(t, p.Check())
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	assert.Equal(t, 20*time.Microsecond, p.RxCoalesce(), "the default on one CPU")
	runtime.GOMAXPROCS(2)
	assert.Zero(t, p.RxCoalesce(), "the default on more")

	p.RxCoalesceUsecs = Ptr(0)
	require.NoError(t, p.Check())
	assert.Zero(t, p.RxCoalesce(), "0 turns it off")

	p.RxCoalesceUsecs = Ptr(250)
	require.NoError(t, p.Check())
	assert.Equal(t, 250*time.Microsecond, p.RxCoalesce())

	for bad, want := range map[int]string{-1: "must be at least 0, got -1", 1001: "must be at most 1000, got 1001"} {
		p.RxCoalesceUsecs = Ptr(bad)
		require.ErrorContains(t, p.Check(), "--rx-coalesce-usecs "+want)
	}
}
