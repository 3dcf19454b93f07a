package media

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decode decodes an Item's data URI with Go's image package.
func decode(t *testing.T, it Item) (image.Image, string, []byte) {
	t.Helper()
	head, data, ok := strings.Cut(it.URL, ",")
	require.True(t, ok)
	assert.Equal(t, "data:image/"+it.Format+";base64", head)
	raw, err := base64.StdEncoding.DecodeString(data)
	require.NoError(t, err)
	assert.Len(t, raw, it.Bytes)
	img, format, err := image.Decode(bytes.NewReader(raw))
	require.NoError(t, err)
	return img, format, raw
}

// TestImagesDecode: every synthetic image decodes with Go's image package
// at the size drawn, in the format asked for.
func TestImagesDecode(t *testing.T) {
	for _, format := range []string{FormatPNG, FormatJPEG} {
		items, err := Images(context.Background(), ImageOptions{WidthMean: 64, HeightMean: 48, Batch: 1, Format: format}, 7, 3)
		require.NoError(t, err)
		for _, it := range items {
			img, got, _ := decode(t, it)
			assert.Equal(t, format, got)
			assert.Equal(t, image.Pt(64, 48), img.Bounds().Size())
			assert.Equal(t, [2]int{64, 48}, [2]int{it.Width, it.Height})
			assert.True(t, it.JSONPlain())
		}
		assert.NotEqual(t, items[0].URL, items[1].URL, "noise: no two images alike")
	}
}

// TestImagesDeterministic: the same seed gives the same bytes whatever the
// CPUs; another seed other bytes; sizes follow the stddev draws.
func TestImagesDeterministic(t *testing.T) {
	o := ImageOptions{WidthMean: 40, WidthStddev: 10, HeightMean: 30, HeightStddev: 5, Batch: 1, Format: FormatRandom}
	a, err := Images(context.Background(), o, 1, 8)
	require.NoError(t, err)
	b, err := Images(context.Background(), o, 1, 8)
	require.NoError(t, err)
	c, err := Images(context.Background(), o, 2, 8)
	require.NoError(t, err)
	sizes, formats := map[[2]int]bool{}, map[string]bool{}
	for i := range a {
		assert.Equal(t, a[i].URL, b[i].URL)
		assert.NotEqual(t, a[i].URL, c[i].URL)
		sizes[[2]int{a[i].Width, a[i].Height}] = true
		formats[a[i].Format] = true
	}
	assert.Greater(t, len(sizes), 1, "sizes are drawn")
	assert.Len(t, formats, 2, "random draws png and jpeg")
}

// TestImagesIdentify: ImageMagick's identify reads a generated PNG and
// JPEG at their size (skipped when ImageMagick is not installed).
func TestImagesIdentify(t *testing.T) {
	identify, err := exec.LookPath("identify")
	if err != nil {
		t.Skip("ImageMagick's identify is not installed (apt-get install imagemagick): skipping the outside decoder check")
	}
	for _, format := range []string{FormatPNG, FormatJPEG} {
		items, err := Images(context.Background(), ImageOptions{WidthMean: 300, HeightMean: 200, Batch: 1, Format: format}, 3, 1)
		require.NoError(t, err)
		_, _, raw := decode(t, items[0])
		path := filepath.Join(t.TempDir(), "img."+format)
		require.NoError(t, os.WriteFile(path, raw, 0o600))
		out, err := exec.Command(identify, "-format", "%m %w %h", path).CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Equal(t, map[string]string{FormatPNG: "PNG", FormatJPEG: "JPEG"}[format]+" 300 200", strings.TrimSpace(string(out)))
	}
}

// TestImageDirectory: a directory source is sampled and resized;
// sequential-cycle walks the files in name order.
func TestImageDirectory(t *testing.T) {
	dir := t.TempDir()
	for i, name := range []string{"a.png", "b.png"} {
		img := image.NewGray(image.Rect(0, 0, 10+i, 10))
		for k := range img.Pix {
			img.Pix[k] = byte(100 * i)
		}
		var buf bytes.Buffer
		require.NoError(t, png.Encode(&buf, img))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600))
	items, err := Images(context.Background(), ImageOptions{WidthMean: 8, HeightMean: 4, Batch: 1, Source: dir, Sampling: SampleSequential}, 0, 3)
	require.NoError(t, err)
	for i, it := range items {
		img, _, _ := decode(t, it)
		assert.Equal(t, image.Pt(8, 4), img.Bounds().Size())
		r, _, _, _ := img.At(0, 0).RGBA()
		assert.Equal(t, uint32(100*(i%2)), r>>8, "image %d is file %d", i, i%2)
	}
}

func TestImageOptionsValidate(t *testing.T) {
	for o, want := range map[ImageOptions]string{
		{WidthMean: 10}:                                        "go together",
		{WidthMean: -1, HeightMean: 1}:                         "--image-width-mean must be between 0",
		{WidthMean: 10, HeightMean: 10, Format: "gif"}:         "--image-format must be png, jpeg or random",
		{WidthMean: 1, HeightMean: 1, Source: "assets"}:        "ships no bundled images",
		{WidthMean: 1, HeightMean: 1, Sampling: SampleShuffle}: "needs a finite source",
		{WidthMean: 1, HeightMean: 1, Batch: -1}:               "--image-batch-size must be at least 0",
		{WidthMean: 1, HeightMean: 1, Sampling: "first"}:       "--image-source-sampling must be",
		{WidthMean: 1e9, HeightMean: 1}:                        "16384 pixels",
	} {
		err := o.Validate()
		require.Error(t, err, "%+v", o)
		assert.Contains(t, err.Error(), want)
	}
	err := ImageOptions{WidthMean: -5, HeightMean: 10}.Validate()
	assert.ErrorContains(t, err, "--image-width-mean must be between 0")
	assert.NotContains(t, err.Error(), "go together", "both were given: only the bound is wrong")
	_, err = Images(context.Background(), ImageOptions{WidthMean: 1, HeightMean: 1, Batch: 1, Source: t.TempDir()}, 0, 1)
	assert.ErrorContains(t, err, "no .png, .jpg, .jpeg or .gif files")
}

// TestHeldBytesEstimates: the estimate a run's memory check uses is within
// a few percent of the data URIs made.
func TestHeldBytesEstimates(t *testing.T) {
	for _, format := range []string{FormatPNG, FormatJPEG} {
		o := ImageOptions{WidthMean: 300, HeightMean: 200, Batch: 1, Format: format}
		items, err := Images(context.Background(), o, 1, 1)
		require.NoError(t, err)
		got, est := float64(len(items[0].URL)), float64(o.HeldBytes())
		assert.InEpsilon(t, got, est, 0.05, "%s: made %v bytes, estimated %v", format, got, est)
	}
	assert.Zero(t, ImageOptions{WidthMean: 300, HeightMean: 200, Source: "dir"}.HeldBytes(), "files are not estimated")
}
