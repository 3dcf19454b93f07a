package swimlane

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failedRun is a run of two sessions of three turns, one request failed.
func failedRun(t *testing.T, failed bool) *Run {
	errJSON := ""
	if failed {
		errJSON = `{"code": 500, "type": "Internal Server Error", "message": "boom"}`
	}
	return load(t, []string{
		rec("s1", "c1", 0, 0, 300, nil, ""), rec("s1", "c1", 1, 320, 600, nil, ""), rec("s1", "c1", 2, 620, 900, nil, errJSON),
		rec("s2", "c2", 0, 100, 400, nil, ""), rec("s2", "c2", 1, 450, 700, nil, ""), rec("s2", "c2", 2, 720, 1000, nil, ""),
	}, `{"benchmark_duration": {"unit": "sec", "avg": 1.0}, "input_config": {"aiperf_go": {"concurrency_ramp_duration": 0.5}}}`)
}

// has reports whether the image holds a pixel of exactly c.
func has(img image.Image, c color.RGBA) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) == c {
				return true
			}
		}
	}
	return false
}

// The PNG decodes at the size the view states, shows a failed request in
// red and, without one, no red.
func TestWritePNG(t *testing.T) {
	for _, failed := range []bool{true, false} {
		v := NewView(failedRun(t, failed), Options{Target: 2})
		var buf bytes.Buffer
		require.NoError(t, v.Write(&buf, "png"))
		img, err := png.Decode(&buf)
		require.NoError(t, err)
		w, h := v.Size()
		assert.Equal(t, image.Rect(0, 0, w, h), img.Bounds())
		assert.Equal(t, failed, has(img, colFailed), "failed %v", failed)
		assert.True(t, has(img, laneColors[0]), "the first lane's colour")
		require.NotNil(t, v.RampS)
		assert.InDelta(t, 0.5, *v.RampS, 1e-9)
		assert.InDelta(t, 1.0, *v.BenchEndS, 1e-9)
	}
}

// A taller view (more rows) is a taller image; the width is fixed.
func TestSizeGrowsWithRows(t *testing.T) {
	small := NewView(failedRun(t, false), Options{})
	var lines []string
	for i := range 60 {
		lines = append(lines, rec(string(rune('A'+i%26))+string(rune('a'+i/26)), "c", 0, float64(i), 100, nil, ""))
	}
	big := NewView(load(t, lines, ""), Options{})
	ws, hs := small.Size()
	wb, hb := big.Size()
	assert.Equal(t, Width, ws)
	assert.Equal(t, Width, wb)
	assert.Greater(t, hb, hs)
}

// The SVG is well-formed XML, whatever the run's name holds.
func TestWriteSVG(t *testing.T) {
	r := failedRun(t, true)
	r.Dir = "runs/a<b>&\x1b[31m"
	v := NewView(r, Options{})
	var buf bytes.Buffer
	require.NoError(t, v.Write(&buf, "svg"))
	d := xml.NewDecoder(&buf)
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	require.Error(t, v.Write(io.Discard, "gif"))
}
