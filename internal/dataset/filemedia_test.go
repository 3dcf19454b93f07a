package dataset

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

func writePNG(t *testing.T, path string, w, h int) []byte {
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
	return buf.Bytes()
}

// wav is a mono 16-bit PCM WAV of n samples at rate Hz.
func wav(rate, n int) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00")
	le := func(v uint32, k int) {
		for i := range k {
			b = append(b, byte(v>>(8*i)))
		}
	}
	le(uint32(rate), 4)
	le(uint32(rate*2), 4)
	le(2, 2)
	le(16, 2)
	b = append(b, "data"...)
	le(uint32(2*n), 4)
	return append(b, make([]byte, 2*n)...)
}

func openFile(t *testing.T, path, kind string) (Dataset, error) {
	tok, err := tokenizer.Load("o200k_base")
	require.NoError(t, err)
	return Open(context.Background(), tok, Options{InputFile: path, CustomType: kind})
}

// TestFileMedia: a single_turn file's images, audios and videos: a URL is
// passed through, a local file (relative to the input file) and a data URI
// are checked and sent as data URIs, in AIPerf's order.
func TestFileMedia(t *testing.T) {
	dir := t.TempDir()
	raw := writePNG(t, filepath.Join(dir, "cat.png"), 30, 20)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.wav"), wav(16000, 8000), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "v.mp4"), []byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00"), 0o600))
	uri := "data:image/png;base64," + base64.StdEncoding.EncodeToString(raw)
	in := filepath.Join(dir, "in.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(strings.Join([]string{
		`{"texts": ["Describe this image."], "images": ["https://picsum.photos/512/512?random=1"]}`,
		`{"text": "two", "image": "cat.png", "images": ["` + uri + `"], "audios": ["a.wav"], "video": "v.mp4"}`,
		`{"audio": "a.wav"}`,
	}, "\n")), 0o600))
	d, err := openFile(t, in, TypeSingleTurn)
	require.NoError(t, err)
	defer d.Close()
	c0, err := d.Conversation(0)
	require.NoError(t, err)
	require.Len(t, c0.Turns[0].Media, 1)
	assert.Equal(t, "https://picsum.photos/512/512?random=1", c0.Turns[0].Media[0].URL)
	c1, err := d.Conversation(1)
	require.NoError(t, err)
	got := c1.Turns[0].Media
	require.Len(t, got, 4)
	assert.Equal(t, uri, got[0].URL, "the local file, as a data URI")
	assert.Equal(t, [2]int{30, 20}, [2]int{got[0].Width, got[0].Height})
	assert.Equal(t, uri, got[1].URL)
	assert.Equal(t, media.Audio, got[2].Kind)
	assert.Equal(t, "wav", got[2].Format)
	assert.InDelta(t, 0.5, got[2].Seconds, 1e-9, "8,000 samples at 16 kHz")
	assert.Equal(t, media.Video, got[3].Kind)
	assert.True(t, strings.HasPrefix(got[3].URL, "data:video/mp4;base64,"))
	c2, err := d.Conversation(2)
	require.NoError(t, err)
	assert.Len(t, c2.Turns[0].Media, 1, "an audio alone is a modality")
}

// TestFileMediaProblems: a bad media input is refused when the file is
// opened, at its line and field, saying what is wrong.
func TestFileMediaProblems(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.png"), []byte("not an image"), 0o600))
	big := filepath.Join(dir, "big.png")
	require.NoError(t, os.WriteFile(big, nil, 0o600))
	require.NoError(t, os.Truncate(big, media.MaxMediaFile+1)) // sparse: costs no disk
	writePNG(t, filepath.Join(dir, "ok.png"), 4, 4)
	in := filepath.Join(dir, "in.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(strings.Join([]string{
		`{"text": "a", "image": "missing.png"}`,
		`{"text": "b", "images": ["notes.png"]}`,
		`{"text": "c", "image": "big.png"}`,
		`{"text": "d", "audio": "https://example.com/a.wav"}`,
		`{"text": "e", "image": "data:image/png;base64,@@"}`,
		`{"text": "f", "video": "ok.png"}`,
		`{"text": "g", "image": "ftp://example.com/x.png"}`,
		`{"text": "h", "image": "ok.png", "image_uuids": ["u1"]}`,
		`{"text": "i", "images": [3]}`,
		`{"text": "ok", "image": "ok.png"}`,
	}, "\n")), 0o600))
	_, err := openFile(t, in, TypeSingleTurn)
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		`in.jsonl:1: image: image file "missing.png" does not exist`,
		`in.jsonl:2: images[0]: image file: ` + filepath.Join(dir, "notes.png") + `: not a PNG, JPEG or GIF image`,
		`in.jsonl:3: image: image file: ` + big + ` is 67108865 bytes: an image may be at most 64 MiB`,
		`in.jsonl:4: audio: an audio is sent as data (input_audio)`,
		`in.jsonl:5: image: image data URI: the data URI is not base64`,
		`in.jsonl:6: video: video file: ` + filepath.Join(dir, "ok.png") + `: not an MP4 or WebM video`,
		`in.jsonl:7: image: "ftp://example.com/x.png": expected an http(s) URL, a data URI or a local path`,
		`in.jsonl:8: image_uuids: image_uuids cannot be used with the singular image field`,
		`in.jsonl:9: images: expected a list of strings`,
	} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, "in.jsonl:10")

	multi := filepath.Join(dir, "multi.jsonl")
	require.NoError(t, os.WriteFile(multi, []byte(`{"session_id": "s", "turns": [{"text": "a", "image": "ok.png"}, {"text": "b", "images": ["gone.png"]}]}`), 0o600))
	_, err = openFile(t, multi, TypeMultiTurn)
	assert.ErrorContains(t, err, `multi.jsonl:1: turns[1].images[0]: image file "gone.png" does not exist`)
}

// TestFileMediaSessionsAndPools: a multi_turn file's turns and a
// random_pool file's rows carry their media as single_turn's do, each turn
// its own.
func TestFileMediaSessionsAndPools(t *testing.T) {
	dir := t.TempDir()
	raw := writePNG(t, filepath.Join(dir, "cat.png"), 30, 20)
	uri := "data:image/png;base64," + base64.StdEncoding.EncodeToString(raw)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.wav"), wav(16000, 16000), 0o600))

	multi := filepath.Join(dir, "multi.jsonl")
	require.NoError(t, os.WriteFile(multi, []byte(`{"session_id": "s", "turns": [`+
		`{"text": "a", "image": "cat.png"}, {"text": "b"}, {"text": "c", "audios": ["a.wav"], "images": ["https://x.test/1.png"]}]}`), 0o600))
	d, err := openFile(t, multi, TypeMultiTurn)
	require.NoError(t, err)
	defer d.Close()
	c, err := d.Conversation(0)
	require.NoError(t, err)
	require.Len(t, c.Turns, 3)
	require.Len(t, c.Turns[0].Media, 1)
	assert.Equal(t, uri, c.Turns[0].Media[0].URL)
	assert.Empty(t, c.Turns[1].Media)
	require.Len(t, c.Turns[2].Media, 2)
	assert.Equal(t, "https://x.test/1.png", c.Turns[2].Media[0].URL, "images before audios, as AIPerf")
	assert.Equal(t, media.Audio, c.Turns[2].Media[1].Kind)
	assert.InDelta(t, 1.0, c.Turns[2].Media[1].Seconds, 1e-9)

	pool := filepath.Join(dir, "pool.jsonl")
	require.NoError(t, os.WriteFile(pool, []byte(`{"text": "q", "image": "cat.png"}`+"\n"), 0o600))
	p, err := openFile(t, pool, TypeRandomPool)
	require.NoError(t, err)
	defer p.Close()
	c, err = p.Conversation(0)
	require.NoError(t, err)
	require.Len(t, c.Turns, 1)
	require.Len(t, c.Turns[0].Media, 1)
	assert.Equal(t, uri, c.Turns[0].Media[0].URL)
}
