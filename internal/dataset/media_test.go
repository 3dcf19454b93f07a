package dataset

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// TestSyntheticImages: every synthetic turn carries --image-batch-size
// images, made once when the dataset opens (the same for a seed), and the
// text prompts are those of a dataset without images.
func TestSyntheticImages(t *testing.T) {
	tok, err := tokenizer.Load("o200k_base")
	require.NoError(t, err)
	o := Options{ISLMean: 20, Entries: 4, Seed: 5, TurnMean: 2,
		Images: media.ImageOptions{WidthMean: 16, HeightMean: 12, Batch: 2}}
	open := func(o Options) Dataset {
		d, err := Open(context.Background(), tok, o)
		require.NoError(t, err)
		return d
	}
	a, b := open(o), open(o)
	plain := o
	plain.Images = media.ImageOptions{}
	c := open(plain)
	seen := map[string]bool{}
	for i := range a.Len() {
		ca, err := a.Conversation(i)
		require.NoError(t, err)
		cb, _ := b.Conversation(i)
		cc, _ := c.Conversation(i)
		require.Len(t, ca.Turns, 2)
		for k, turn := range ca.Turns {
			require.Len(t, turn.Media, 2)
			assert.Equal(t, cc.Turns[k].Text, turn.Text, "images do not change the prompts")
			assert.Empty(t, cc.Turns[k].Media)
			for m, it := range turn.Media {
				assert.Equal(t, cb.Turns[k].Media[m].URL, it.URL, "same seed, same image")
				assert.Equal(t, [2]int{16, 12}, [2]int{it.Width, it.Height})
				assert.False(t, seen[it.URL], "every image distinct")
				seen[it.URL] = true
			}
		}
	}
}

// TestSyntheticImagesBounded: images that would hold more than
// MaxMediaHeld are refused before one is made (8000×8000 noise PNGs for
// 100 entries hold about 24 GiB).
func TestSyntheticImagesBounded(t *testing.T) {
	tok, err := tokenizer.Load("o200k_base")
	require.NoError(t, err)
	o := Options{ISLMean: 20, Entries: 100, Seed: 5, Images: media.ImageOptions{WidthMean: 8000, HeightMean: 8000, Batch: 1}}
	_, err = Open(context.Background(), tok, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "synthetic images: 100 images (100 turns × --image-batch-size 1) of about 244.2 MiB each would hold about 23.8 GiB")
}

// TestSyntheticMediaBounded: audios and videos count against MaxMediaHeld
// with images, the spread of image sizes counts, and one medium over
// media.MaxItemBytes is refused, all before any is made.
func TestSyntheticMediaBounded(t *testing.T) {
	for name, c := range map[string]struct {
		o    Options
		want string
	}{
		"audio total": {Options{Audios: media.AudioOptions{LengthMean: 60, Batch: 1, Depths: []int{32}, SampleRatesKHz: []float64{192}, Channels: 2}},
			"synthetic audios: 100 audios (100 turns × --audio-batch-size 1) of about 117.2 MiB each would hold about 11.4 GiB, more than the 8.0 GiB a run may: lower --num-dataset-entries, --audio-batch-size, --audio-length-mean"},
		"audio item": {Options{Audios: media.AudioOptions{LengthMean: 600, Batch: 1, Depths: []int{32}, SampleRatesKHz: []float64{192}, Channels: 2}},
			"synthetic audios: one would hold up to about 1.1 GiB, more than the 1.0 GiB one medium may: lower --audio-length-mean"},
		"image spread": {Options{Images: media.ImageOptions{WidthMean: 100, HeightMean: 100, WidthStddev: 10000, HeightStddev: 10000, Batch: 1}},
			"synthetic images: one would hold up to about 1.0 GiB"},
		"together": {Options{Images: media.ImageOptions{WidthMean: 4000, HeightMean: 4000, Batch: 1},
			Audios: media.AudioOptions{LengthMean: 60, Batch: 1, SampleRatesKHz: []float64{96}, Channels: 2}},
			"synthetic media: 100 images (100 turns × --image-batch-size 1) of about 61.0 MiB each and 100 audios (100 turns × --audio-batch-size 1) of about 29.3 MiB each would hold about 8.8 GiB"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := checkMediaHeld(c.o, 100)
			assert.ErrorContains(t, err, c.want)
		})
	}
	ok := Options{Images: media.ImageOptions{WidthMean: 512, HeightMean: 512, WidthStddev: 50, HeightStddev: 50, Batch: 1},
		Audios: media.AudioOptions{LengthMean: 30, LengthStddev: 5, Batch: 1}, Videos: media.VideoOptions{Width: 640, Height: 480, Batch: 1, Seconds: 5, FPS: 4}}
	left, err := checkMediaHeld(ok, 100)
	assert.NoError(t, err)
	assert.Less(t, left, int64(MaxMediaHeld), "the images and audios take their share; videos get the rest")
	// 1080p videos are bounded as they are made: their raw frames are not held.
	_, err = checkMediaHeld(Options{Videos: media.VideoOptions{Width: 1920, Height: 1080, Batch: 1, Seconds: 10, FPS: 8}}, 100)
	assert.NoError(t, err)
}
