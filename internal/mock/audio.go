package mock

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/aiperf-go/aiperf/internal/media"
)

// AudioTokens is the prompt tokens of an audio of the given duration as
// vLLM counts them for Qwen2-Audio (docs/multimodal.md): Whisper's log-mel
// frames at 100 a second (16 kHz, hop 160), at most 3,000 (30 s), through
// the encoder's stride-2 convolution and a stride-2 pooling:
// ((L−1)/2 + 1 − 2)/2 + 1, about 25 a second.
func AudioTokens(seconds float64) int {
	l := min(3000, int(math.Floor(seconds*100)))
	conv := (l-1)/2 + 1
	return max(1, (conv-2)/2+1)
}

// audioIDs decodes an input_audio part: a WAV (its header read) or an MP3
// (its frames walked) counted by AudioTokens; anything else is an error.
func audioIDs(data, format string) ([]uint32, error) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("input_audio: invalid base64 data: %w", err)
	}
	if format != "wav" && format != "mp3" {
		return nil, fmt.Errorf("input_audio: format %q: expected wav or mp3", format)
	}
	secs, err := audioSeconds(raw, format)
	if err != nil {
		return nil, fmt.Errorf("input_audio: invalid %s data: %w", strings.ToUpper(format), err)
	}
	return mediaIDs(raw, AudioTokens(secs)), nil
}

// audioSeconds is the duration of a WAV or an MP3 ("wav" or "mp3").
func audioSeconds(raw []byte, format string) (float64, error) {
	if format == "wav" {
		w, err := media.ParseWAV(raw)
		return w.Seconds(), err
	}
	return mp3Seconds(raw)
}

// mp3Seconds walks an MP3 stream's Layer III frames (after an ID3v2 tag)
// and sums their durations.
func mp3Seconds(b []byte) (float64, error) {
	if len(b) >= 10 && string(b[:3]) == "ID3" {
		size := int(b[6]&0x7f)<<21 | int(b[7]&0x7f)<<14 | int(b[8]&0x7f)<<7 | int(b[9]&0x7f)
		b = b[min(len(b), 10+size):]
	}
	bitrates := map[bool][16]int{
		true:  {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0},
		false: {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
	}
	rates := map[int][3]int{3: {44100, 48000, 32000}, 2: {22050, 24000, 16000}, 0: {11025, 12000, 8000}}
	var secs float64
	frames := 0
	for len(b) >= 4 {
		if b[0] != 0xff || b[1]&0xe0 != 0xe0 {
			break
		}
		version, layer := int(b[1]>>3&3), int(b[1]>>1&3)
		bi, si, pad := int(b[2]>>4), int(b[2]>>2&3), int(b[2]>>1&1)
		if version == 1 || layer != 1 || si == 3 || bitrates[version == 3][bi] == 0 {
			return 0, fmt.Errorf("frame %d: not an MPEG Layer III frame header", frames)
		}
		samples := 1152
		if version != 3 {
			samples = 576
		}
		rate := rates[version][si]
		n := samples/8*bitrates[version == 3][bi]*1000/rate + pad
		secs += float64(samples) / float64(rate)
		frames++
		b = b[min(len(b), n):]
	}
	if frames == 0 {
		return 0, errors.New("no MPEG audio frame")
	}
	return secs, nil
}
