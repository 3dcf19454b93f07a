package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"image"
	_ "image/png" // the generated images' format
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// sentMedia runs a chat profile with a 300×200 PNG and a 2.5 s WAV (44.1
// kHz, 24 bits, stereo) per request against the mock and returns the first
// request's image and audio bytes as inputs.json holds them: what the
// tool generated and sent.
func sentMedia(t *testing.T) (png, wav []byte) {
	t.Helper()
	c := tutorial{doc: "docs/multimodal.md (Synthetic images, Synthetic audio)",
		args: []string{"profile", "-m", "Qwen/Qwen2-VL-2B-Instruct", "--url", "localhost:8000", "--endpoint-type", "chat",
			"--image-width-mean", "300", "--image-height-mean", "200", "--audio-length-mean", "2.5",
			"--audio-sample-rates", "44.1", "--audio-depths", "24", "--audio-num-channels", "2",
			"--isl", "10", "--osl", "2", "--num-dataset-entries", "1", "--request-count", "1", "--ui", "none"},
		mock: mock.Config{Fast: true}}
	_, dir := runTutorial(t, c, nil)
	var inputs struct {
		Data []struct {
			Payloads []struct {
				Messages []struct {
					Content []struct {
						ImageURL   *struct{ URL string }  `json:"image_url"`
						InputAudio *struct{ Data string } `json:"input_audio"`
					} `json:"content"`
				} `json:"messages"`
			} `json:"payloads"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, onlyArtifact(t, dir, "inputs.json"))), &inputs))
	require.NotEmpty(t, inputs.Data)
	require.NotEmpty(t, inputs.Data[0].Payloads)
	for _, m := range inputs.Data[0].Payloads[0].Messages {
		for _, p := range m.Content {
			var err error
			switch {
			case p.ImageURL != nil:
				data, ok := strings.CutPrefix(p.ImageURL.URL, "data:image/png;base64,")
				require.True(t, ok, "a PNG data URI")
				png, err = base64.StdEncoding.DecodeString(data)
			case p.InputAudio != nil:
				wav, err = base64.StdEncoding.DecodeString(p.InputAudio.Data)
			}
			require.NoError(t, err)
		}
	}
	require.NotEmpty(t, png, "the request carried an image")
	require.NotEmpty(t, wav, "the request carried an audio")
	return png, wav
}

// TestSentMediaDecodes is the real-client check on what a run sent:
// its image decodes with Go's image package and with ImageMagick's
// identify (skipped, saying so, without it) at the size asked for; its WAV
// lasts the duration asked for by header arithmetic (the data chunk's
// bytes over the fmt chunk's byte rate), read here without aiperf's own
// parser.
func TestSentMediaDecodes(t *testing.T) {
	png, wav := sentMedia(t)
	img, format, err := image.Decode(bytes.NewReader(png))
	require.NoError(t, err)
	assert.Equal(t, "png", format)
	assert.Equal(t, image.Pt(300, 200), img.Bounds().Size())

	rate, channels, bits, dataBytes := wavHeader(t, wav)
	assert.Equal(t, [3]uint32{44100, 2, 24}, [3]uint32{rate, channels, bits})
	assert.Equal(t, 2.5, float64(dataBytes)/float64(rate*channels*bits/8), "seconds: data bytes over bytes a second")

	identify, err := exec.LookPath("identify")
	if err != nil {
		t.Skip("ImageMagick's identify is not installed (apt-get install imagemagick): skipping the outside decoder check")
	}
	path := filepath.Join(t.TempDir(), "sent.png")
	require.NoError(t, os.WriteFile(path, png, 0o600))
	out, err := exec.Command(identify, "-format", "%m %w %h", path).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "PNG 300 200", strings.TrimSpace(string(out)))
}

// wavHeader walks a RIFF/WAVE file's chunks: the fmt chunk's sample rate,
// channels and bits, and the data chunk's size, checked against the file.
func wavHeader(t *testing.T, b []byte) (rate, channels, bits, dataBytes uint32) {
	t.Helper()
	require.Greater(t, len(b), 12)
	require.Equal(t, "RIFF", string(b[:4]))
	require.Equal(t, "WAVE", string(b[8:12]))
	assert.Equal(t, uint32(len(b)-8), binary.LittleEndian.Uint32(b[4:8]), "the RIFF size")
	for at := 12; at+8 <= len(b); {
		id, size := string(b[at:at+4]), binary.LittleEndian.Uint32(b[at+4:at+8])
		body := b[at+8:]
		switch id {
		case "fmt ":
			channels = uint32(binary.LittleEndian.Uint16(body[2:4]))
			rate = binary.LittleEndian.Uint32(body[4:8])
			bits = uint32(binary.LittleEndian.Uint16(body[14:16]))
			assert.Equal(t, rate*channels*bits/8, binary.LittleEndian.Uint32(body[8:12]), "the byte rate")
		case "data":
			require.LessOrEqual(t, int(size), len(body), "the data chunk is whole")
			dataBytes = size
		}
		at += 8 + int(size) + int(size&1)
	}
	require.NotZero(t, rate, "a fmt chunk")
	return rate, channels, bits, dataBytes
}
