package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// Video synthesis types (--video-synth-type) and formats (--video-format).
const (
	SynthMovingShapes = "moving_shapes"
	SynthGridClock    = "grid_clock"
	SynthNoise        = "noise"
	FormatWebM        = "webm"
	FormatMP4         = "mp4"
)

// Bounds of a synthetic video.
const (
	MaxVideoSide    = 7680
	MaxVideoSeconds = 600
	MaxVideoFPS     = 240
)

// VideoOptions are AIPerf's Video Input flags.
type VideoOptions struct {
	// Width and Height (both or neither) enable videos.
	Width, Height int
	Batch         int     // videos per request (AIPerf's default 1)
	Seconds       float64 // --video-duration (AIPerf's default 5)
	FPS           int     // --video-fps (AIPerf's default 4)
	Synth         string  // moving_shapes (default), grid_clock or noise
	Format        string  // webm (default) or mp4
	Codec         string  // ffmpeg's encoder (default libvpx-vp9)
	// AudioChannels (0: no track, 1 or 2) embeds a noise track of
	// AudioRateHz, AudioDepth bits, encoded by AudioCodec (default
	// libvorbis for WebM, libopus for MP4).
	AudioChannels, AudioDepth int
	AudioRateHz               float64
	AudioCodec                string
}

// Enabled reports whether requests carry videos: a width and height are
// given and the batch is not 0, as in AIPerf.
func (o VideoOptions) Enabled() bool { return o.Batch > 0 && o.Width > 0 && o.Height > 0 }

// withDefaults fills AIPerf's defaults.
func (o VideoOptions) withDefaults() VideoOptions {
	if o.Synth == "" {
		o.Synth = SynthMovingShapes
	}
	if o.Format == "" {
		o.Format = FormatWebM
	}
	if o.Codec == "" {
		o.Codec = "libvpx-vp9"
	}
	if o.AudioCodec == "" {
		o.AudioCodec = map[string]string{FormatWebM: "libvorbis", FormatMP4: "libopus"}[o.Format]
	}
	if o.AudioRateHz == 0 {
		o.AudioRateHz = 44100
	}
	if o.AudioDepth == 0 {
		o.AudioDepth = 16
	}
	return o
}

// Validate checks the options: every problem is a *FlagError, joined.
func (o VideoOptions) Validate() error {
	var errs []error
	bad := func(flag, format string, a ...any) { errs = append(errs, &FlagError{flag, fmt.Sprintf(format, a...)}) }
	if (o.Width > 0) != (o.Height > 0) {
		bad("video-width", "and --video-height go together: give both (got %d and %d)", o.Width, o.Height)
	}
	if o.Width < 0 || o.Width > MaxVideoSide || o.Height < 0 || o.Height > MaxVideoSide {
		bad("video-width", "and --video-height must be between 1 and %d pixels, got %d×%d", MaxVideoSide, o.Width, o.Height)
	}
	if o.Batch < 0 {
		bad("video-batch-size", "must be at least 0, got %d", o.Batch)
	}
	if math.IsNaN(o.Seconds) || o.Seconds <= 0 || o.Seconds > MaxVideoSeconds {
		bad("video-duration", "must be more than 0 and at most %d seconds, got %v", MaxVideoSeconds, o.Seconds)
	}
	if o.FPS < 1 || o.FPS > MaxVideoFPS {
		bad("video-fps", "must be between 1 and %d, got %d", MaxVideoFPS, o.FPS)
	}
	switch o.Synth {
	case "", SynthMovingShapes, SynthGridClock, SynthNoise:
	default:
		bad("video-synth-type", "must be moving_shapes, grid_clock or noise, got %q", o.Synth)
	}
	switch o.Format {
	case "", FormatWebM, FormatMP4:
	default:
		bad("video-format", "must be webm or mp4, got %q", o.Format)
	}
	if o.AudioChannels < 0 || o.AudioChannels > 2 {
		bad("video-audio-num-channels", "must be 0 (no audio), 1 or 2, got %d", o.AudioChannels)
	}
	if r := o.AudioRateHz; r != 0 && (math.IsNaN(r) || r < 8 || r > 96000) {
		bad("video-audio-sample-rate", "must be between 8 (kHz) and 96000 (Hz), got %v", r)
	}
	switch o.AudioDepth {
	case 0, 8, 16, 24, 32:
	default:
		bad("video-audio-depth", "must be 8, 16, 24 or 32, got %d", o.AudioDepth)
	}
	switch o.AudioCodec {
	case "", "aac", "libvorbis", "libopus":
	default:
		bad("video-audio-codec", "must be aac, libvorbis or libopus, got %q", o.AudioCodec)
	}
	return errors.Join(errs...)
}

// frames is the frames of a video: round(duration × fps), at least 1.
func (o VideoOptions) frames() int { return max(1, int(math.Round(o.Seconds*float64(o.FPS)))) }

// HeldBytes bounds what one synthetic video of o holds as its data URI:
// 4/3 of its frames as the encoder takes them (yuv420p, 1.5 bytes a pixel)
// and of its audio track's PCM. An encoder does not make the frames larger
// than that (noise, which does not compress, encodes to about 0.4 of it
// with libvpx-vp9 or libx264; moving shapes to far less), so the bound is
// safe, and generous for the smooth synthesis types.
func (o VideoOptions) HeldBytes() int64 {
	o = o.withDefaults()
	b := 0.0
	if o.AudioChannels > 0 {
		rate := o.AudioRateHz
		if rate <= 96 {
			rate *= 1000
		}
		b += o.Seconds * rate * float64(o.AudioChannels*o.AudioDepth/8)
	}
	return uriBytes(b + 4096)
}

// videoLower is what to lower when videos are too large.
const videoLower = "--video-width, --video-height, --video-duration or --video-fps"

// MaxItemHeld is what a synthetic video of o holds before ffmpeg encodes
// it: its audio track's PCM (HeldBytes). Its frames are made one at a time
// and piped to ffmpeg, and what the encoded file holds (from a few KiB a
// second for moving shapes to near the raw frames for noise) is counted
// as each video is made (Videos).
func (o VideoOptions) MaxItemHeld() int64 { return o.HeldBytes() }

// Lower names the flags that make videos smaller.
func (o VideoOptions) Lower() string { return videoLower }

// VideoEncoder checks that ffmpeg is installed with the encoders o needs,
// saying what to install when it is not.
func VideoEncoder(o VideoOptions) error {
	o = o.withDefaults()
	path, err := exec.LookPath("ffmpeg")
	if err != nil {
		return &FlagError{"video-width", "synthetic videos are encoded by ffmpeg: install " + FFmpegPackage + "; ffmpeg is not on PATH"}
	}
	out, err := exec.Command(path, "-hide_banner", "-encoders").Output()
	if err != nil {
		return fmt.Errorf("synthetic videos: %s -encoders: %w", path, err)
	}
	need := []string{o.Codec}
	if o.AudioChannels > 0 {
		need = append(need, o.AudioCodec)
	}
	for _, c := range need {
		if !strings.Contains(string(out), " "+c+" ") {
			return &FlagError{"video-codec", fmt.Sprintf("%s: %s has no such encoder (see ffmpeg -encoders; Debian's %s has libvpx-vp9, libx264, libvorbis and libopus)", c, path, FFmpegPackage)}
		}
	}
	return nil
}

// streamVideo keys the random draws of synthetic videos.
const streamVideo uint64 = 0x766964 // "vid"

// Videos returns n synthetic videos: video j is drawn from (seed, j)
// alone, its frames made here and encoded by ffmpeg (found at run time;
// an error names the package when it is missing), kept as data URIs. A
// video whose file would hold more than MaxItemBytes, or videos holding
// more than budget together (0: no bound), stop it with an error that
// says what to lower.
func Videos(ctx context.Context, o VideoOptions, seed int64, n int, budget int64) ([]Item, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	if b := o.MaxItemHeld(); b > MaxItemBytes {
		return nil, &ItemError{What: "video", Bytes: b, Lower: videoLower}
	}
	if err := VideoEncoder(o); err != nil {
		return nil, err
	}
	var held atomic.Int64
	return parallel(ctx, n, func(j int) (Item, error) {
		r := rand.New(rand.NewPCG(uint64(seed)^streamVideo, uint64(j)))
		b, err := encodeVideo(ctx, o, r)
		if err != nil {
			return Item{}, fmt.Errorf("synthetic video %d: %w", j, err)
		}
		if total := held.Add(uriBytes(float64(len(b)))); budget > 0 && total > budget {
			return Item{}, fmt.Errorf("the videos made so far hold about %s, past the %s left of the run's bound on "+
				"media: lower --num-dataset-entries, --video-batch-size, %s", Bytes(total), Bytes(budget), videoLower)
		}
		it := encoded(Video, o.Format, "video/"+o.Format, b)
		it.Width, it.Height, it.Seconds = o.Width, o.Height, o.Seconds
		return it, nil
	})
}

// encodeVideo pipes the frames (raw RGB) to ffmpeg and returns the file.
func encodeVideo(ctx context.Context, o VideoOptions, r *rand.Rand) ([]byte, error) {
	frames := o.frames()
	args := []string{"-hide_banner", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
		"-s", fmt.Sprintf("%dx%d", o.Width, o.Height), "-r", fmt.Sprint(o.FPS), "-i", "pipe:0"}
	// The file, not a pipe: ffmpeg seeks back to write the duration
	// (WebM) and the index (MP4) where a server's demuxer looks first.
	dir, err := os.MkdirTemp("", "aiperf-video-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if o.AudioChannels > 0 {
		rate := o.AudioRateHz
		if rate <= 96 { // kHz, as AIPerf accepts
			rate *= 1000
		}
		wav := NoiseWAV(r, int(math.Round(o.Seconds*rate)), int(rate), o.AudioChannels, o.AudioDepth)
		path := filepath.Join(dir, "audio.wav")
		if err := os.WriteFile(path, wav, 0o600); err != nil {
			return nil, err
		}
		args = append(args, "-i", path, "-c:a", o.AudioCodec, "-shortest")
	}
	out := filepath.Join(dir, "video."+o.Format)
	args = append(args, "-c:v", o.Codec, "-pix_fmt", "yuv420p", "-f", o.Format, out)
	cmd := exec.CommandContext(ctx, "ffmpeg", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start ffmpeg: %w", err)
	}
	img := image.NewRGBA(image.Rect(0, 0, o.Width, o.Height))
	rgb := make([]byte, 3*o.Width*o.Height)
	phase := r.IntN(1 << 16) // each video's own start: no two alike
	var werr error
	for k := 0; k < frames && werr == nil; k++ {
		drawFrame(img, o.Synth, phase+k, frames, r)
		for i, p := 0, 0; i < len(img.Pix); i, p = i+4, p+3 {
			rgb[p], rgb[p+1], rgb[p+2] = img.Pix[i], img.Pix[i+1], img.Pix[i+2]
		}
		_, werr = in.Write(rgb)
	}
	in.Close()
	if err := cmd.Wait(); err != nil || werr != nil {
		if ctx.Err() != nil { // ffmpeg was killed because the run was stopped
			return nil, fmt.Errorf("ffmpeg %s/%s: %w", o.Format, o.Codec, ctx.Err())
		}
		// err is nil when ffmpeg exited 0 but stopped reading its input.
		return nil, fmt.Errorf("ffmpeg %s/%s: %w: %s", o.Format, o.Codec, errors.Join(err, werr), strings.TrimSpace(stderr.String()))
	}
	if fi, err := os.Stat(out); err == nil && uriBytes(float64(fi.Size())) > MaxItemBytes {
		return nil, &ItemError{What: "video", Bytes: uriBytes(float64(fi.Size())), Lower: videoLower}
	}
	return os.ReadFile(out)
}

// drawFrame draws frame k (from the video's phase) of n: shapes crossing a
// black frame, a grid with a clock hand, or noise.
func drawFrame(img *image.RGBA, synth string, k, n int, r *rand.Rand) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	switch synth {
	case SynthNoise:
		for i := 0; i < len(img.Pix); i += 4 {
			v := r.Uint32()
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = byte(v), byte(v>>8), byte(v>>16), 0xff
		}
		return
	case SynthGridClock:
		fill(img, color.RGBA{40, 40, 40, 255})
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				if x%32 == 0 || y%32 == 0 {
					img.SetRGBA(x, y, color.RGBA{90, 90, 90, 255})
				}
			}
		}
		angle := 2 * math.Pi * float64(k) / float64(max(1, n))
		cx, cy, rad := float64(w)/2, float64(h)/2, float64(min(w, h))/2.5
		for t := 0.0; t < rad; t++ {
			img.SetRGBA(int(cx+t*math.Sin(angle)), int(cy-t*math.Cos(angle)), color.RGBA{255, 255, 255, 255})
		}
		return
	}
	fill(img, color.RGBA{0, 0, 0, 255})
	for s := range 3 {
		size := max(4, min(w, h)/6)
		x := (s*w/3 + k*(4+2*s)) % max(1, w)
		y := (s*h/4 + k*(3+s)) % max(1, h)
		c := []color.RGBA{{220, 40, 40, 255}, {40, 200, 60, 255}, {50, 80, 230, 255}}[s]
		for dy := range size {
			for dx := range size {
				if s%2 == 1 && (dx-size/2)*(dx-size/2)+(dy-size/2)*(dy-size/2) > size*size/4 {
					continue // a circle
				}
				img.SetRGBA((x+dx)%w, (y+dy)%h, c)
			}
		}
	}
}

func fill(img *image.RGBA, c color.RGBA) {
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
}
