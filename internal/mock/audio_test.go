package mock

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
)

func TestAudioTokens(t *testing.T) {
	for secs, want := range map[float64]int{1: 25, 5: 125, 0.5: 12, 30: 750, 60: 750, 0.001: 1} {
		assert.Equal(t, want, AudioTokens(secs), "%v s", secs)
	}
}

// TestMP3Seconds walks MPEG-1 Layer III frames: 128 kb/s at 44.1 kHz is
// 417 or 418 bytes a frame of 1,152 samples.
func TestMP3Seconds(t *testing.T) {
	var b []byte
	b = append(b, "ID3\x03\x00\x00\x00\x00\x00\x04abcd"...)
	for i := range 100 {
		pad := byte(i % 2)
		frame := make([]byte, 417+int(pad))
		frame[0], frame[1], frame[2] = 0xff, 0xfb, 0x90|pad<<1
		b = append(b, frame...)
	}
	secs, err := mp3Seconds(b)
	require.NoError(t, err)
	assert.InDelta(t, 100*1152/44100.0, secs, 1e-9)
	_, err = mp3Seconds([]byte("not mp3"))
	assert.Error(t, err)
}

func audioChat(data, format string) map[string]any {
	return map[string]any{"model": "m", "max_tokens": 1, "messages": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": data, "format": format}},
	}}}}
}

// TestAudioPromptTokens: an input_audio part adds its tokens; a broken one
// is a 400 naming it.
func TestAudioPromptTokens(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	wav := media.NoiseWAV(rand.New(rand.NewPCG(1, 2)), 32000, 16000, 1, 16) // 2 s
	resp := post(t, base+"/v1/chat/completions", audioChat(base64.StdEncoding.EncodeToString(wav), "wav"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var got struct {
		Usage usage `json:"usage"`
	}
	require.NoError(t, json.Unmarshal([]byte(readAll(t, resp)), &got))
	assert.Equal(t, 50, got.Usage.PromptTokens, "2 s of audio")
	for data, want := range map[[2]string]string{
		{"@@", "wav"}: "invalid base64",
		{base64.StdEncoding.EncodeToString([]byte("RIFFxxxxWAVE")), "wav"}: "invalid WAV data",
		{"AAAA", "flac"}: `expected wav or mp3`,
	} {
		resp := post(t, base+"/v1/chat/completions", audioChat(data[0], data[1]))
		body := readAll(t, resp)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, body, want)
	}
}

// TestVideoTokens pins Qwen2-VL's video count: 2 frames a second (an even
// number, at least 4), frame pairs merged, each frame resized within
// 128·28² to 768·28² pixels.
func TestVideoTokens(t *testing.T) {
	assert.Equal(t, 5*17*23, VideoTokens(640, 480, 5), "10 frames of 476×644")
	assert.Equal(t, 2*17*23, VideoTokens(640, 480, 1), "at least 4 frames")
	assert.Equal(t, 2*10*14, VideoTokens(64, 48, 2), "a small frame grows past 128·28² pixels: 280×392")
}
