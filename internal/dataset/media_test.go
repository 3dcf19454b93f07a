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
