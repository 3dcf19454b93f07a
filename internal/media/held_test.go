package media

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImageEstimateSpread: the estimates account for the spread of the
// sizes, not the mean alone: 100 ± 10,000 pixels a side is drawn up to
// 16,384, so one image may hold more than MaxItemBytes and the average
// is far above a 100×100 image's.
func TestImageEstimateSpread(t *testing.T) {
	narrow := ImageOptions{WidthMean: 100, HeightMean: 100, Batch: 1}
	wide := ImageOptions{WidthMean: 100, HeightMean: 100, WidthStddev: 10000, HeightStddev: 10000, Batch: 1}
	assert.Less(t, narrow.MaxItemHeld(), int64(MaxItemBytes))
	assert.Greater(t, wide.MaxItemHeld(), int64(MaxItemBytes), "the largest: 16,384² PNG")
	assert.Greater(t, wide.HeldBytes(), 1000*narrow.HeldBytes(), "the mean of the clamped draws, about 3,823 a side")
	assert.InDelta(t, 3823, clampedMean(100, 10000, 1, MaxImageSide), 10)
	assert.InDelta(t, 512, clampedMean(512, 10, 1, MaxImageSide), 1e-6, "a spread far from the bounds leaves the mean")
	// The average estimate is what many drawn images hold.
	r := rand.New(rand.NewPCG(1, 2))
	var sum float64
	for range 100000 {
		sum += float64(drawSide(r, 100, 10000))
	}
	assert.InEpsilon(t, clampedMean(100, 10000, 1, MaxImageSide), sum/100000, 0.02)
}

// TestImageItemBounded: an image drawn larger than MaxItemBytes is refused
// as it is made, before its pixels are allocated.
func TestImageItemBounded(t *testing.T) {
	err := checkImageItem(16384, 16384, FormatPNG)
	var ie *ItemError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "one synthetic image would hold about 1.0 GiB, more than the 1.0 GiB one item may: lower --image-width-mean")
	assert.NoError(t, checkImageItem(16384, 16384, FormatJPEG), "a JPEG is a fifth of it")
	assert.NoError(t, checkImageItem(8000, 8000, FormatPNG))
}

// TestAudioEstimates: the average estimate is within a few percent of the
// WAVs made; the largest is 4/3 of the PCM of the longest, richest audio.
func TestAudioEstimates(t *testing.T) {
	o := AudioOptions{LengthMean: 0.5, Batch: 1, Depths: []int{16, 24}, SampleRatesKHz: []float64{8, 16}, Channels: 2}
	items, err := Audios(context.Background(), o, 1, 200)
	require.NoError(t, err)
	var sum float64
	for _, it := range items {
		sum += float64(len(it.URL))
	}
	assert.InEpsilon(t, sum/200, float64(o.HeldBytes()), 0.1)
	huge := AudioOptions{LengthMean: 600, Batch: 1, Depths: []int{32}, SampleRatesKHz: []float64{192}, Channels: 2}
	assert.Equal(t, uriBytes(600*192000*2*4+44), huge.MaxItemHeld())
	assert.Greater(t, huge.MaxItemHeld(), int64(MaxItemBytes))
	spread := AudioOptions{LengthMean: 10, LengthStddev: 100, Batch: 1}
	assert.Equal(t, uriBytes(410*16000*2+44), spread.MaxItemHeld(), "mean + 4σ")
}

// TestAudioItemBounded: an audio larger than MaxItemBytes is refused
// before its samples are allocated (an hour at 192 kHz, 32 bits, stereo
// is 5.5 GB of PCM).
func TestAudioItemBounded(t *testing.T) {
	o := AudioOptions{LengthMean: 3600, Batch: 1, Depths: []int{32}, SampleRatesKHz: []float64{192}, Channels: 2}
	_, err := Audios(context.Background(), o, 1, 1)
	var ie *ItemError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "synthetic audio 0 (3600.0 s at 192000 Hz, 32 bits, 2 channels): one synthetic audio would hold about 6.9 GiB")
	assert.Contains(t, err.Error(), "lower --audio-length-mean")
}

// TestVideoEstimates: before encoding a video holds its audio track's PCM
// (its frames are piped to ffmpeg one at a time).
func TestVideoEstimates(t *testing.T) {
	o := VideoOptions{Width: 640, Height: 480, Batch: 1, Seconds: 10, FPS: 8}
	assert.Equal(t, uriBytes(4096), o.HeldBytes())
	o.AudioChannels, o.AudioRateHz = 2, 48
	assert.Equal(t, uriBytes(10*48000*2*2+4096), o.HeldBytes(), "kHz, 16 bits by default")
}

// TestVideosCountWhatTheyHold: the encoded videos count against the budget
// as they are made, and past it the error says what to lower.
func TestVideosCountWhatTheyHold(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed")
	}
	o := VideoOptions{Width: 64, Height: 48, Batch: 1, Seconds: 1, FPS: 4, Synth: SynthNoise}
	items, err := Videos(context.Background(), o, 1, 2, 0)
	require.NoError(t, err)
	_, err = Videos(context.Background(), o, 1, 2, int64(len(items[0].URL))/2)
	assert.ErrorContains(t, err, "the videos made so far hold about")
	assert.ErrorContains(t, err, "lower --num-dataset-entries, --video-batch-size, --video-width")
}

// TestVideoOptionsZero: --video-fps 0 and --video-duration 0 are refused,
// naming the flag, as negative values are (not replaced by defaults).
func TestVideoOptionsZero(t *testing.T) {
	base := VideoOptions{Width: 64, Height: 48, Batch: 1, Seconds: 1, FPS: 4}
	assert.NoError(t, base.Validate())
	for _, c := range []struct {
		set  func(o *VideoOptions)
		want string
	}{
		{func(o *VideoOptions) { o.FPS = 0 }, "--video-fps must be between 1 and 240, got 0"},
		{func(o *VideoOptions) { o.FPS = -1 }, "--video-fps must be between 1 and 240, got -1"},
		{func(o *VideoOptions) { o.Seconds = 0 }, "--video-duration must be more than 0 and at most 600 seconds, got 0"},
		{func(o *VideoOptions) { o.Seconds = -1 }, "--video-duration must be more than 0"},
	} {
		o := base
		c.set(&o)
		assert.ErrorContains(t, o.Validate(), c.want)
	}
}

// TestVideoCanceled: a run stopped while ffmpeg encodes reports
// context.Canceled (an interrupted run), not ffmpeg's death by signal.
// The ffmpeg here is a stand-in that marks that it started and waits.
func TestVideoCanceled(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	script := "#!/bin/sh\ncase \"$*\" in *-encoders*) echo ' V..... libvpx-vp9 VP9'; exit 0;; esac\n" +
		"touch '" + marker + "'\nexec sleep 600\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ffmpeg"), []byte(script), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for { // cancel once ffmpeg has started: the marker, not a delay
			if _, err := os.Stat(marker); err == nil {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := Videos(ctx, VideoOptions{Width: 64, Height: 48, Batch: 1, Seconds: 600, FPS: 240, Synth: SynthNoise}, 1, 1, 0)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

// TestParseWAVTruncated: a data chunk that claims more bytes than the file
// holds is refused, as a truncated PNG is, not timed by the bytes present.
func TestParseWAVTruncated(t *testing.T) {
	wav := NoiseWAV(rand.New(rand.NewPCG(1, 1)), 50, 8000, 1, 16)
	_, err := ParseWAV(wav)
	require.NoError(t, err)
	_, err = ParseWAV(wav[:len(wav)-1])
	assert.ErrorContains(t, err, "truncated")
	claims := append([]byte(nil), wav...)
	binary.LittleEndian.PutUint32(claims[40:], 4_000_000_000)
	_, err = ParseWAV(claims)
	assert.ErrorContains(t, err, "a data chunk of 4000000000 bytes in a file that holds 100 after its header: truncated")
	_, err = FromBytes(Audio, claims)
	assert.ErrorContains(t, err, "not a WAV or MP3 audio")
}
