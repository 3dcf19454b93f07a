package plot

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/ctxtest"
)

// TestWriteStopsAtInterrupt: Write drew every figure whatever its context
// (aiperf plot said "stopping cleanly" at a Ctrl-C, drew them all and
// exited 0). Done between two figures, it writes the first whole and
// begins no other; done in the middle of a figure's drawing, it draws
// nothing more of it and writes nothing.
func TestWriteStopsAtInterrupt(t *testing.T) {
	ttft := make([]float64, 2000)
	for i := range ttft {
		ttft[i] = float64(i%97) + 10
	}
	var figs []Figure
	for _, name := range []string{"first", "second"} {
		f := cdfOfTimes("cdf", "TTFT per request", []string{"a", "b"}, []times{{ttft: ttft}, {ttft: ttft[1:]}}).Figure("")
		f.Name = name
		figs = append(figs, f)
	}
	// How many looks at the context the first figure takes, drawn and
	// written: the drawing looks as it goes.
	counting := ctxtest.NewDoneAfter(math.MaxInt64)
	_, err := Write(counting, t.TempDir(), figs[:1], []string{"svg"}, 640, 400)
	require.NoError(t, err)
	one := counting.Looks()
	require.Greater(t, one, int64(10))

	dir := t.TempDir()
	paths, err := Write(ctxtest.NewDoneAfter(one+1), dir, figs, []string{"svg"}, 640, 400)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []string{filepath.Join(dir, "first.svg")}, paths)
	assert.Equal(t, []string{"first.svg"}, fileNames(t, dir), "the first whole, nothing of the second")

	dir = t.TempDir()
	paths, err = Write(ctxtest.NewDoneAfter(one/2), dir, figs, []string{"svg"}, 640, 400)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, paths)
	assert.Empty(t, fileNames(t, dir), "a figure cut while drawn is not written")
}

// fileNames are the names of the files in dir.
func fileNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
