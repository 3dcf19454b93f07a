package plot

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// strokes are the corners of the SVG's paths stroked in colour (as
// "#RRGGBB"), a slice of points per path.
func strokes(t *testing.T, svg, colour string) [][][2]float64 {
	t.Helper()
	var out [][][2]float64
	re := regexp.MustCompile(`<path d="([^"]*)" style="fill:none;stroke:` + colour + `;`)
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		var pts [][2]float64
		for _, c := range regexp.MustCompile(`[ML]([-0-9.]+),([-0-9.]+)`).FindAllStringSubmatch(m[1], -1) {
			x, err := strconv.ParseFloat(c[1], 64)
			require.NoError(t, err)
			y, err := strconv.ParseFloat(c[2], 64)
			require.NoError(t, err)
			pts = append(pts, [2]float64{x, y})
		}
		out = append(out, pts)
	}
	return out
}

// TestCDFOneValueDrawn draws a run of one request (and one whose requests
// all took the same time) with a run of several: each has a curve, a rise
// from 0 to 1 at its value, besides its legend swatch.
func TestCDFOneValueDrawn(t *testing.T) {
	c := cdfOfTimes("cdf", "TTFT and ITL per request", []string{"one", "alike", "many"}, []times{
		{ttft: []float64{42}},
		{ttft: []float64{25, 25, 25}, itl: []float64{3, 3}},
		{ttft: []float64{10, 20, 30}, itl: []float64{1, 2, 4}},
	})
	require.NotNil(t, c)
	var buf bytes.Buffer
	require.NoError(t, c.Figure("").Encode(&buf, "svg", 900, 500))
	svg := buf.String()
	for i, name := range []string{"one", "alike", "many"} {
		colour := strings.ToUpper(Color(i))
		var curves [][][2]float64
		for _, pts := range strokes(t, svg, colour) {
			lo, hi := pts[0][1], pts[0][1]
			for _, p := range pts {
				lo, hi = min(lo, p[1]), max(hi, p[1])
			}
			if hi > lo { // the legend swatch is a flat line
				curves = append(curves, pts)
			}
		}
		want := 2 // TTFT and ITL panels
		if name == "one" {
			want = 1 // no ITL of a one-token answer
		}
		require.Len(t, curves, want, "%s: a curve per panel with its values", name)
		if name == "many" {
			continue
		}
		for _, pts := range curves {
			first, last := pts[0], pts[len(pts)-1]
			assert.Equal(t, first[0], last[0], "%s: the rise is at its single value", name)
			assert.Greater(t, last[1]-first[1], 100.0, "%s: from 0 to 1 (most of the panel's height)", name)
		}
	}
}

// TestCDFSteps checks a line's corners: from 0 at the smallest value, each
// fraction held up to the next value.
func TestCDFSteps(t *testing.T) {
	s := cdfSteps(cdfLine("x", []float64{2, 1}, 100))
	require.Len(t, s, 3)
	assert.Equal(t, [2]float64{1, 0}, [2]float64{s[0].X, s[0].Y})
	assert.Equal(t, [2]float64{1, 0.5}, [2]float64{s[1].X, s[1].Y})
	assert.Equal(t, [2]float64{2, 1}, [2]float64{s[2].X, s[2].Y})
	s = cdfSteps(cdfLine("one", []float64{7}, 100))
	require.Len(t, s, 2)
	assert.Equal(t, [2]float64{7, 0}, [2]float64{s[0].X, s[0].Y})
	assert.Equal(t, [2]float64{7, 1}, [2]float64{s[1].X, s[1].Y})
}
