package media

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAudiosWAV: a generated WAV has the requested duration by header
// arithmetic (data bytes over bytes a second), at every depth, rate and
// channel count asked for, and its RIFF sizes add up.
func TestAudiosWAV(t *testing.T) {
	for _, depth := range []int{8, 16, 24, 32} {
		for _, ch := range []int{1, 2} {
			o := AudioOptions{LengthMean: 2.5, Batch: 1, Depths: []int{depth}, SampleRatesKHz: []float64{44.1}, Channels: ch}
			items, err := Audios(context.Background(), o, 9, 2)
			require.NoError(t, err)
			for _, it := range items {
				assert.Equal(t, "wav", it.Format)
				raw, err := base64.StdEncoding.DecodeString(it.Data())
				require.NoError(t, err)
				w, err := ParseWAV(raw)
				require.NoError(t, err)
				assert.Equal(t, WAV{SampleRate: 44100, Channels: ch, BitsPerSample: depth, DataBytes: int64(110250 * ch * depth / 8)}, w)
				assert.Equal(t, 2.5, w.Seconds(), "%d bits × %d channels", depth, ch)
				assert.Equal(t, uint32(len(raw)-8), binary.LittleEndian.Uint32(raw[4:8]), "RIFF size")
				assert.Equal(t, 2.5, it.Seconds)
			}
			assert.NotEqual(t, items[0].URL, items[1].URL)
		}
	}
	items, err := Audios(context.Background(), AudioOptions{LengthMean: 1, LengthStddev: 0.5, Batch: 1}, 1, 20)
	require.NoError(t, err)
	durations := map[float64]bool{}
	for _, it := range items {
		durations[it.Seconds] = true
		assert.InDelta(t, 1, it.Seconds, 3, "AIPerf's defaults: 16 kHz, 16 bits, mono")
	}
	assert.Greater(t, len(durations), 10, "durations are drawn")
}

// TestAudiosMP3: MP3 needs ffmpeg; without it the error names the package
// to install, before any audio is made.
func TestAudiosMP3(t *testing.T) {
	o := AudioOptions{LengthMean: 1, Batch: 1, Format: FormatMP3}
	items, err := Audios(context.Background(), o, 1, 1)
	if _, lookErr := exec.LookPath("ffmpeg"); lookErr != nil {
		require.Error(t, err)
		assert.Contains(t, err.Error(), "--audio-format mp3 needs ffmpeg (Debian/Ubuntu: apt-get install ffmpeg)")
		return
	}
	if err != nil && MP3Encoder() != nil {
		t.Skipf("ffmpeg has no MP3 encoder: %v", err)
	}
	require.NoError(t, err)
	raw, err := base64.StdEncoding.DecodeString(items[0].Data())
	require.NoError(t, err)
	assert.True(t, isMP3(raw))
	assert.Equal(t, "mp3", items[0].Format)
}

func TestAudioOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		o    AudioOptions
		want string
	}{
		{AudioOptions{LengthMean: -1}, "--audio-length-mean must be between 0 and 3600 seconds"},
		{AudioOptions{LengthMean: 1, Format: "ogg"}, "--audio-format must be wav or mp3"},
		{AudioOptions{LengthMean: 1, Depths: []int{12}}, "--audio-depths must be 8, 16, 24 or 32 bits"},
		{AudioOptions{LengthMean: 1, SampleRatesKHz: []float64{1}}, "--audio-sample-rates must be between 8 and 192 kHz"},
		{AudioOptions{LengthMean: 1, Channels: 3}, "--audio-num-channels must be 1 (mono) or 2 (stereo)"},
	} {
		assert.ErrorContains(t, c.o.Validate(), c.want)
	}
}
