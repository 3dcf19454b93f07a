package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
)

// Audio formats (--audio-format).
const (
	FormatWAV = "wav"
	FormatMP3 = "mp3"
)

// Bounds of synthetic audio.
const (
	MaxAudioSeconds = 3600
	MinSampleRateHz = 8000
	MaxSampleRateHz = 192000
)

// AudioOptions are AIPerf's Audio Input flags.
type AudioOptions struct {
	// LengthMean and LengthStddev draw each audio's duration in seconds
	// (at least a millisecond); 0 means no audio.
	LengthMean, LengthStddev float64
	// Batch is the audios per request (AIPerf's default 1).
	Batch int
	// Format is wav (the default when "") or mp3 (encoded by ffmpeg).
	Format string
	// Depths (bits: 8, 16, 24, 32) and SampleRatesKHz are drawn from for
	// each audio; empty means AIPerf's defaults, 16 bits and 16 kHz.
	Depths         []int
	SampleRatesKHz []float64
	// Channels is 1 (the default when 0) or 2.
	Channels int
}

// Enabled reports whether requests carry audio: a length is given and the
// batch is not 0, as in AIPerf.
func (o AudioOptions) Enabled() bool { return o.Batch > 0 && o.LengthMean > 0 }

// Validate checks the options: every problem is a *FlagError, joined.
func (o AudioOptions) Validate() error {
	var errs []error
	bad := func(flag, format string, a ...any) { errs = append(errs, &FlagError{flag, fmt.Sprintf(format, a...)}) }
	for _, f := range []struct {
		flag string
		v    float64
	}{{"audio-length-mean", o.LengthMean}, {"audio-length-stddev", o.LengthStddev}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > MaxAudioSeconds {
			bad(f.flag, "must be between 0 and %d seconds, got %v", MaxAudioSeconds, f.v)
		}
	}
	if o.Batch < 0 {
		bad("audio-batch-size", "must be at least 0, got %d", o.Batch)
	}
	switch o.Format {
	case "", FormatWAV, FormatMP3:
	default:
		bad("audio-format", "must be wav or mp3, got %q", o.Format)
	}
	for _, d := range o.Depths {
		if !slices.Contains([]int{8, 16, 24, 32}, d) {
			bad("audio-depths", "must be 8, 16, 24 or 32 bits, got %d", d)
		}
	}
	for _, r := range o.SampleRatesKHz {
		if hz := r * 1000; math.IsNaN(hz) || hz < MinSampleRateHz || hz > MaxSampleRateHz {
			bad("audio-sample-rates", "must be between %d and %d kHz, got %v", MinSampleRateHz/1000, MaxSampleRateHz/1000, r)
		}
	}
	if o.Channels != 0 && o.Channels != 1 && o.Channels != 2 {
		bad("audio-num-channels", "must be 1 (mono) or 2 (stereo), got %d", o.Channels)
	}
	return errors.Join(errs...)
}

// defaults are the depths, rates (kHz) and channels drawn from: AIPerf's
// 16 bits, 16 kHz and mono when not given.
func (o AudioOptions) defaults() (depths []int, rates []float64, channels int) {
	depths, rates, channels = o.Depths, o.SampleRatesKHz, max(1, o.Channels)
	if len(depths) == 0 {
		depths = []int{16}
	}
	if len(rates) == 0 {
		rates = []float64{16}
	}
	return depths, rates, channels
}

// mp3BytesPerSecond is about what ffmpeg's libmp3lame writes a second at
// its default 128 kbit/s.
const mp3BytesPerSecond = 16000

// HeldBytes is about what one synthetic audio of o holds as its data URI,
// on average over many: 4/3 of its PCM (the mean duration of the
// distribution clamped to 1 ms and MaxAudioSeconds, times the mean of the
// sample rates and of the depths drawn from, times the channels) and the
// 44-byte header; an MP3, 4/3 of 16,000 bytes a second.
func (o AudioOptions) HeldBytes() int64 {
	depths, rates, ch := o.defaults()
	secs := clampedMean(o.LengthMean, o.LengthStddev, 0.001, MaxAudioSeconds)
	if o.Format == FormatMP3 {
		return uriBytes(secs * mp3BytesPerSecond)
	}
	var rate, depth float64
	for _, r := range rates {
		rate += r * 1000 / float64(len(rates))
	}
	for _, d := range depths {
		depth += float64(d) / float64(len(depths))
	}
	return uriBytes(secs*rate*float64(ch)*depth/8 + 44)
}

// MaxItemHeld is about what the largest synthetic audio of o holds as its
// data URI (an MP3's, the WAV it is encoded from): its duration at the
// mean + TailSigmas standard deviations (at most MaxAudioSeconds), at the
// highest sample rate and depth drawn from.
func (o AudioOptions) MaxItemHeld() int64 {
	depths, rates, ch := o.defaults()
	return uriBytes(tail(o.LengthMean, o.LengthStddev, 0.001, MaxAudioSeconds)*slices.Max(rates)*1000*
		float64(ch)*float64(slices.Max(depths))/8 + 44)
}

// Lower names the flags that make audios smaller.
func (o AudioOptions) Lower() string { return audioLower }

// audioLower is what to lower when audios are too large.
const audioLower = "--audio-length-mean (or its --audio-length-stddev), --audio-sample-rates, --audio-depths or --audio-num-channels"

// streamAudio keys the random draws of synthetic audio.
const streamAudio uint64 = 0x617564 // "aud"

// Audios returns n synthetic audios of Gaussian noise: audio j is drawn
// from (seed, j) alone. WAV is written with the standard library; MP3 is
// encoded by ffmpeg, which must be installed (an error says so before any
// audio is made).
func Audios(ctx context.Context, o AudioOptions, seed int64, n int) ([]Item, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Format == FormatMP3 {
		if err := MP3Encoder(); err != nil {
			return nil, err
		}
	}
	depths, rates, channels := o.defaults()
	return parallel(ctx, n, func(j int) (Item, error) {
		r := rand.New(rand.NewPCG(uint64(seed)^streamAudio, uint64(j)))
		secs := o.LengthMean
		if o.LengthStddev > 0 {
			secs += o.LengthStddev * r.NormFloat64()
		}
		secs = min(MaxAudioSeconds, max(0.001, secs))
		rate := int(math.Round(rates[r.IntN(len(rates))] * 1000))
		depth := depths[r.IntN(len(depths))]
		if b := uriBytes(math.Round(secs*float64(rate))*float64(channels*depth/8) + 44); b > MaxItemBytes {
			return Item{}, fmt.Errorf("synthetic audio %d (%.1f s at %d Hz, %d bits, %d channels): %w", j, secs, rate, depth, channels,
				&ItemError{What: "audio", Bytes: b, Lower: audioLower})
		}
		wav := NoiseWAV(r, int(math.Round(secs*float64(rate))), rate, channels, depth)
		if o.Format == FormatMP3 {
			mp3, err := encodeMP3(ctx, wav)
			if err != nil {
				return Item{}, fmt.Errorf("synthetic audio %d: %w", j, err)
			}
			it := encoded(Audio, FormatMP3, "audio/mpeg", mp3)
			it.Seconds = secs
			return it, nil
		}
		it := encoded(Audio, FormatWAV, "audio/wav", wav)
		w, _ := ParseWAV(wav)
		it.Seconds = w.Seconds()
		return it, nil
	})
}

// NoiseWAV is a PCM WAV file of frames frames of Gaussian noise (σ = 0.1 of
// full scale) at rate Hz: 8 bits unsigned, else signed little-endian.
func NoiseWAV(r *rand.Rand, frames, rate, channels, depth int) []byte {
	size := frames * channels * depth / 8
	b := make([]byte, 0, 44+size)
	le16 := func(v int) { b = binary.LittleEndian.AppendUint16(b, uint16(v)) }
	le32 := func(v int) { b = binary.LittleEndian.AppendUint32(b, uint32(v)) }
	b = append(b, "RIFF"...)
	le32(36 + size)
	b = append(b, "WAVEfmt "...)
	le32(16)
	le16(1) // PCM
	le16(channels)
	le32(rate)
	le32(rate * channels * depth / 8)
	le16(channels * depth / 8)
	le16(depth)
	b = append(b, "data"...)
	le32(size)
	full := math.Ldexp(1, depth-1) - 1
	for range frames * channels {
		v := int64(math.Round(max(-1, min(1, 0.1*r.NormFloat64())) * full))
		switch depth {
		case 8:
			b = append(b, byte(v+128))
		case 16:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 24:
			b = append(b, byte(v), byte(v>>8), byte(v>>16))
		default:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
	}
	return b
}

// FFmpegPackage is what to install for the encoders aiperf runs ffmpeg for.
const FFmpegPackage = "ffmpeg (Debian/Ubuntu: apt-get install ffmpeg)"

// MP3Encoder reports whether ffmpeg with an MP3 encoder (libmp3lame) is
// installed, saying what to install when it is not.
func MP3Encoder() error {
	path, err := exec.LookPath("ffmpeg")
	if err != nil {
		return &FlagError{"audio-format", "mp3 needs " + FFmpegPackage + " to encode MP3; ffmpeg is not on PATH (or use --audio-format wav)"}
	}
	out, err := exec.Command(path, "-hide_banner", "-encoders").Output()
	if err != nil || !strings.Contains(string(out), "libmp3lame") {
		return &FlagError{"audio-format", "mp3 needs ffmpeg built with libmp3lame (" + FFmpegPackage + "); " + path + " has no MP3 encoder (or use --audio-format wav)"}
	}
	return nil
}

// encodeMP3 encodes a WAV file as MP3 with ffmpeg.
func encodeMP3(ctx context.Context, wav []byte) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "wav", "-i", "pipe:0",
		"-codec:a", "libmp3lame", "-f", "mp3", "pipe:1")
	cmd.Stdin = bytes.NewReader(wav)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ffmpeg mp3: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}
