package media

import (
	"bytes"
	"fmt"
	"image"
	_ "image/gif" // a directory source may hold GIFs
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// Sampling strategies of a directory source (--image-source-sampling).
const (
	SampleRandom     = "random-with-replacement"
	SampleShuffle    = "shuffle-cycle"
	SampleSequential = "sequential-cycle"
)

// maxSourceFile bounds an image file of a directory source.
const maxSourceFile = 64 << 20

// checkSource checks --image-source and --image-source-sampling.
func checkSource(source, sampling string) error {
	switch sampling {
	case "", SampleRandom, SampleShuffle, SampleSequential:
	default:
		return &FlagError{"image-source-sampling", fmt.Sprintf("must be %s, %s or %s, got %q", SampleRandom, SampleShuffle, SampleSequential, sampling)}
	}
	switch source {
	case "", SourceNoise:
		if sampling != "" && sampling != SampleRandom {
			return &FlagError{"image-source-sampling", fmt.Sprintf("%s needs a finite source (a directory): noise takes only %s", sampling, SampleRandom)}
		}
	case SourceAssets:
		return &FlagError{"image-source", "assets: aiperf ships no bundled images; give a directory of images (--image-source DIR) or use noise"}
	}
	return nil
}

// dirSource draws the images of a directory, decoded once each when first
// drawn and resized for each use.
type dirSource struct {
	files    []string
	order    []int // the draw order (shuffle-cycle, sequential-cycle)
	sampling string
	seed     int64
	mu       sync.Mutex
	decoded  map[int]image.Image
}

// openSource indexes a directory source (nil for noise).
func openSource(source, sampling string, seed int64) (*dirSource, error) {
	if source == "" || source == SourceNoise {
		return nil, nil
	}
	entries, err := os.ReadDir(source)
	if err != nil {
		return nil, fmt.Errorf("--image-source %s: %w", source, err)
	}
	s := &dirSource{sampling: sampling, seed: seed, decoded: map[int]image.Image{}}
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".png", ".jpg", ".jpeg", ".gif":
			if e.Type().IsRegular() {
				s.files = append(s.files, filepath.Join(source, e.Name()))
			}
		}
	}
	if len(s.files) == 0 {
		return nil, fmt.Errorf("--image-source %s: no .png, .jpg, .jpeg or .gif files in the directory", source)
	}
	slices.Sort(s.files)
	return s, nil
}

// index is the file drawn for image j.
func (s *dirSource) index(j int) int {
	n := len(s.files)
	switch s.sampling {
	case SampleSequential:
		return j % n
	case SampleShuffle:
		cycle := j / n
		perm := rand.New(rand.NewPCG(uint64(s.seed)^streamImages, uint64(cycle)<<1|1)).Perm(n)
		return perm[j%n]
	}
	return rand.New(rand.NewPCG(uint64(s.seed)^streamImages^0x736f75, uint64(j))).IntN(n)
}

// pick is image j: its file decoded and resized to w×h.
func (s *dirSource) pick(j, w, h int) (image.Image, error) {
	i := s.index(j)
	s.mu.Lock()
	img, ok := s.decoded[i]
	s.mu.Unlock()
	if !ok {
		var err error
		if img, err = decodeFile(s.files[i]); err != nil {
			return nil, fmt.Errorf("--image-source: %w", err)
		}
		s.mu.Lock()
		s.decoded[i] = img
		s.mu.Unlock()
	}
	return Resize(img, w, h), nil
}

// decodeFile decodes an image file of at most maxSourceFile bytes.
func decodeFile(path string) (image.Image, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxSourceFile {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d MiB an image may have", path, st.Size(), maxSourceFile>>20)
	}
	b, err := inputfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	img, err := DecodeImage(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

// MaxPixels bounds the pixels of an image decoded (a small file can claim
// a huge size): 64 megapixels, 256 MiB decoded.
const MaxPixels = 64 << 20

// DecodeImage decodes a PNG, JPEG or GIF file, refusing one that claims
// more than MaxPixels before decoding it.
func DecodeImage(b []byte) (image.Image, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not a PNG, JPEG or GIF image: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, fmt.Errorf("an image of %d×%d pixels: at most %d megapixels are decoded", cfg.Width, cfg.Height, MaxPixels>>20)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not a valid image: %w", err)
	}
	return img, nil
}

// Resize scales img to w×h by nearest neighbour, into an opaque RGBA.
func Resize(img image.Image, w, h int) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		sy := b.Min.Y + y*b.Dy()/h
		for x := range w {
			r, g, bl, _ := img.At(b.Min.X+x*b.Dx()/w, sy).RGBA()
			i := out.PixOffset(x, y)
			out.Pix[i], out.Pix[i+1], out.Pix[i+2], out.Pix[i+3] = byte(r>>8), byte(g>>8), byte(bl>>8), 0xff
		}
	}
	return out
}
