package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImageOptionsChecked: the Image Input flags are checked before any
// traffic, each problem naming its flag.
func TestImageOptionsChecked(t *testing.T) {
	for name, c := range map[string]struct {
		set  func(p *Profile)
		want string
	}{
		"width alone": {func(p *Profile) { p.ImageWidthMean = 512 }, "--image-width-mean and --image-height-mean go together"},
		"embeddings":  {func(p *Profile) { p.ImageWidthMean, p.ImageHeightMean, p.EndpointType = 8, 8, EndpointEmbeddings }, "--endpoint-type embeddings sends none"},
		"input file":  {func(p *Profile) { p.ImageWidthMean, p.ImageHeightMean, p.InputFile = 8, 8, "in.jsonl" }, "with --input-file, give them in the records"},
		"bad format":  {func(p *Profile) { p.ImageWidthMean, p.ImageHeightMean, p.ImageFormat = 8, 8, "webp" }, "--image-format must be"},
		"huge":        {func(p *Profile) { p.ImageWidthMean, p.ImageHeightMean = 1e6, 8 }, "between 0 and 16384 pixels"},
		"bundled":     {func(p *Profile) { p.ImageWidthMean, p.ImageHeightMean, p.ImageSource = 8, 8, "assets" }, "ships no bundled images"},
		"fps 0":       {func(p *Profile) { p.VideoWidth, p.VideoHeight, p.VideoFPS = 64, 48, new(0) }, "--video-fps must be between 1 and 240, got 0"},
		"duration 0":  {func(p *Profile) { p.VideoWidth, p.VideoHeight, p.VideoDuration = 64, 48, new(0.0) }, "--video-duration must be more than 0"},
	} {
		t.Run(name, func(t *testing.T) {
			p := NewProfile()
			p.Model = []string{"m"}
			c.set(&p)
			err := p.Check()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	p := NewProfile()
	p.Model = []string{"m"}
	p.ImageWidthMean, p.ImageHeightMean = 512, 512
	require.NoError(t, p.Check())
	assert.True(t, p.Images().Enabled())
	assert.Equal(t, 1, p.Images().Batch, "AIPerf's default batch")
}
