package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// Image formats (--image-format).
const (
	FormatPNG    = "png"
	FormatJPEG   = "jpeg"
	FormatRandom = "random"
)

// Image sources (--image-source): random noise, or a directory's images.
const (
	SourceNoise  = "noise"
	SourceAssets = "assets"
)

// JPEGQuality is the quality synthetic JPEGs are encoded at (PIL's default,
// as AIPerf saves them).
const JPEGQuality = 75

// MaxImageSide bounds a synthetic image's width and height, in pixels: an
// image of 16,384² is 1 GiB of pixels while it is encoded.
const MaxImageSide = 16384

// ImageOptions are AIPerf's Image Input flags.
type ImageOptions struct {
	// WidthMean, HeightMean (pixels) and their standard deviations draw
	// each image's size from normal distributions (rounded, at least 1).
	WidthMean, WidthStddev, HeightMean, HeightStddev float64
	// Batch is the images per request (--image-batch-size; AIPerf's
	// default 1).
	Batch int
	// Format is png (the default when ""), jpeg or random (each image
	// either, drawn).
	Format string
	// Source is noise (the default when "") or a directory of images;
	// Sampling is how a directory's images are drawn.
	Source, Sampling string
}

// Enabled reports whether requests carry images: a width and height are
// given and the batch is not 0, as in AIPerf.
func (o ImageOptions) Enabled() bool {
	return o.Batch > 0 && o.WidthMean > 0 && o.HeightMean > 0
}

// HeldBytes is about what one synthetic image of o holds as its data URI,
// on average over many: 4/3 of a noise PNG's 3 bytes a pixel and a filter
// byte a row (a noise JPEG is about a fifth of that; random formats, the
// mean of the two), at the mean width and height of the distributions as
// drawn, clamped to 1 and MaxImageSide (a spread that meets a bound moves
// the mean: 100 ± 10,000 pixels averages about 3,823). Images from
// --image-source are not estimated (0).
func (o ImageOptions) HeldBytes() int64 {
	if o.Source != "" {
		return 0
	}
	w := clampedMean(o.WidthMean, o.WidthStddev, 1, MaxImageSide)
	h := clampedMean(o.HeightMean, o.HeightStddev, 1, MaxImageSide)
	png := imageFile(w, h, FormatPNG)
	switch o.Format {
	case FormatJPEG:
		return uriBytes(png / 5)
	case FormatRandom:
		return uriBytes((png + png/5) / 2)
	}
	return uriBytes(png)
}

// MaxItemHeld is about what the largest synthetic image of o holds as its
// data URI: each side at its mean + TailSigmas standard deviations (within
// 1 and MaxImageSide), a PNG unless every image is a JPEG. Images from
// --image-source are not estimated (0).
func (o ImageOptions) MaxItemHeld() int64 {
	if o.Source != "" {
		return 0
	}
	return uriBytes(imageFile(tail(o.WidthMean, o.WidthStddev, 1, MaxImageSide),
		tail(o.HeightMean, o.HeightStddev, 1, MaxImageSide), o.Format))
}

// imageFile is about the size of a w×h noise image's file: a PNG, 3 bytes
// a pixel and a filter byte a row; a JPEG, a fifth of that.
func imageFile(w, h float64, format string) float64 {
	png := w*h*3 + h + 100
	if format == FormatJPEG {
		return png / 5
	}
	return png
}

// Lower names the flags that make images smaller.
func (o ImageOptions) Lower() string { return imageLower }

// imageLower is what to lower when images are too large.
const imageLower = "--image-width-mean, --image-height-mean or their --image-*-stddev (or use --image-format jpeg)"

// checkImageItem refuses an image of w×h in format too large to hold.
func checkImageItem(w, h int, format string) error {
	if b := uriBytes(imageFile(float64(w), float64(h), format)); b > MaxItemBytes {
		return &ItemError{What: "image", Bytes: b, Lower: imageLower}
	}
	return nil
}

// FlagError is a problem with one flag's value.
type FlagError struct{ Flag, Msg string }

func (e *FlagError) Error() string { return "--" + e.Flag + " " + e.Msg }

// Validate checks the options: every problem is a *FlagError, joined.
func (o ImageOptions) Validate() error {
	var errs []error
	bad := func(flag, format string, a ...any) { errs = append(errs, &FlagError{flag, fmt.Sprintf(format, a...)}) }
	for _, f := range []struct {
		flag string
		v    float64
	}{{"image-width-mean", o.WidthMean}, {"image-width-stddev", o.WidthStddev},
		{"image-height-mean", o.HeightMean}, {"image-height-stddev", o.HeightStddev}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > MaxImageSide {
			bad(f.flag, "must be between 0 and %d pixels, got %v", MaxImageSide, f.v)
		}
	}
	if (o.WidthMean > 0) != (o.HeightMean > 0) && o.WidthMean >= 0 && o.HeightMean >= 0 {
		bad("image-width-mean", "and --image-height-mean go together: give both (got %v and %v)", o.WidthMean, o.HeightMean)
	}
	if o.Batch < 0 {
		bad("image-batch-size", "must be at least 0, got %d", o.Batch)
	}
	switch o.Format {
	case "", FormatPNG, FormatJPEG, FormatRandom:
	default:
		bad("image-format", "must be png, jpeg or random, got %q", o.Format)
	}
	if err := checkSource(o.Source, o.Sampling); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// streamImages keys the random draws of synthetic images.
const streamImages uint64 = 0x696d67 // "img"

// Images returns n synthetic images: image j is drawn from (seed, j)
// alone. They are generated in parallel, one image's pixels per CPU at a
// time, and kept only as data URIs. It stops with ctx's error.
func Images(ctx context.Context, o ImageOptions, seed int64, n int) ([]Item, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	src, err := openSource(o.Source, o.Sampling, seed)
	if err != nil {
		return nil, err
	}
	return parallel(ctx, n, func(j int) (Item, error) {
		r := rand.New(rand.NewPCG(uint64(seed)^streamImages, uint64(j)))
		w, h := drawSide(r, o.WidthMean, o.WidthStddev), drawSide(r, o.HeightMean, o.HeightStddev)
		format := o.Format
		switch format {
		case "":
			format = FormatPNG
		case FormatRandom:
			format = []string{FormatPNG, FormatJPEG}[r.IntN(2)]
		}
		if src == nil {
			if err := checkImageItem(w, h, format); err != nil {
				return Item{}, fmt.Errorf("synthetic image %d (%d×%d): %w", j, w, h, err)
			}
		}
		var img image.Image
		level := png.NoCompression // noise does not compress: the filters and deflate are wasted work
		if src == nil {
			img = Noise(r, w, h)
		} else {
			var err error // this image's: the closures run in parallel
			if img, err = src.pick(j, w, h); err != nil {
				return Item{}, err
			}
			level = png.BestSpeed
		}
		it, err := EncodeImage(img, format, level)
		if err != nil {
			return Item{}, fmt.Errorf("synthetic image %d: %w", j, err)
		}
		return it, nil
	})
}

// drawSide draws round(normal(mean, stddev)), between 1 and MaxImageSide.
func drawSide(r *rand.Rand, mean, stddev float64) int {
	v := mean
	if stddev > 0 {
		v += stddev * r.NormFloat64()
	}
	return min(MaxImageSide, max(1, int(math.Round(v))))
}

// Noise is a w×h opaque image of random pixels drawn from r (RGBA: the
// encoders' fast path).
func Noise(r *rand.Rand, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	pix := img.Pix
	for i := 0; i+4 <= len(pix); i += 4 {
		v := r.Uint32()
		pix[i], pix[i+1], pix[i+2], pix[i+3] = byte(v), byte(v>>8), byte(v>>16), 0xff
	}
	return img
}

// EncodeImage encodes img as png (at the given compression level) or jpeg
// into an Item.
func EncodeImage(img image.Image, format string, level png.CompressionLevel) (Item, error) {
	var buf bytes.Buffer
	var err error
	switch format {
	case FormatPNG:
		enc := png.Encoder{CompressionLevel: level}
		err = enc.Encode(&buf, img)
	case FormatJPEG:
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: JPEGQuality})
	default:
		return Item{}, fmt.Errorf("image format %q: expected png or jpeg", format)
	}
	if err != nil {
		return Item{}, fmt.Errorf("encode %s: %w", format, err)
	}
	it := encoded(Image, format, "image/"+format, buf.Bytes())
	b := img.Bounds()
	it.Width, it.Height = b.Dx(), b.Dy()
	return it, nil
}

// parallel calls gen(j) for j in [0, n) on every CPU and returns the
// results in order; the first error (or ctx's) stops it.
func parallel(ctx context.Context, n int, gen func(int) (Item, error)) ([]Item, error) {
	out := make([]Item, n)
	var next atomic.Int64
	var once sync.Once
	var first error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for {
				j := int(next.Add(1) - 1)
				if j >= n || ctx.Err() != nil {
					return
				}
				it, err := gen(j)
				if err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
				out[j] = it
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("generate media: stopped: %w", err)
	}
	return out, nil
}
