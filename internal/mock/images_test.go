package mock

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type imagesReply struct {
	Data []struct {
		B64JSON string `json:"b64_json"`
		URL     string `json:"url"`
	} `json:"data"`
}

func decodeB64PNG(t *testing.T, b64 string) image.Image {
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(raw))
	require.NoError(t, err)
	return img
}

// TestImageGeneration: /v1/images/generations returns n PNGs of the size
// asked for; a bad size or n is a 400.
func TestImageGeneration(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	resp := post(t, base+"/v1/images/generations", map[string]any{"model": "flux", "prompt": "a lake", "n": 2, "size": "64x32", "response_format": "b64_json"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var got imagesReply
	require.NoError(t, json.Unmarshal([]byte(readAll(t, resp)), &got))
	require.Len(t, got.Data, 2)
	assert.Equal(t, image.Pt(64, 32), decodeB64PNG(t, got.Data[0].B64JSON).Bounds().Size())
	for body, want := range map[string]string{
		`{"prompt": "x", "size": "big"}`:    "expected WIDTHxHEIGHT",
		`{"prompt": "x", "n": 0}`:           "n must be between 1 and 10",
		`{"size": "8x8"}`:                   "prompt is required",
		`{"prompt": "x", "size": "9000x1"}`: "each 1 to 4096",
	} {
		var v any
		require.NoError(t, json.Unmarshal([]byte(body), &v))
		resp := post(t, base+"/v1/images/generations", v)
		msg := readAll(t, resp)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		assert.Contains(t, msg, want)
	}
}

func editForm(t *testing.T, image []byte) (*bytes.Buffer, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	require.NoError(t, w.WriteField("prompt", "make it snow"))
	require.NoError(t, w.WriteField("model", "flux"))
	if image != nil {
		part, err := w.CreateFormFile("image", "image.png")
		require.NoError(t, err)
		_, _ = part.Write(image)
	}
	require.NoError(t, w.Close())
	return &buf, w.FormDataContentType()
}

// TestImageEdit: /v1/images/edits decodes the reference image (a broken
// one is a 400) and returns an image of its size when none is asked for.
func TestImageEdit(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	var ref bytes.Buffer
	require.NoError(t, png.Encode(&ref, image.NewGray(image.Rect(0, 0, 40, 30))))
	for name, c := range map[string]struct {
		image  []byte
		status int
		want   string
	}{
		"ok":        {ref.Bytes(), http.StatusOK, ""},
		"truncated": {ref.Bytes()[:len(ref.Bytes())-10], http.StatusBadRequest, "image: invalid image data"},
		"missing":   {nil, http.StatusBadRequest, "an edit needs a reference image"},
	} {
		t.Run(name, func(t *testing.T) {
			body, ctype := editForm(t, c.image)
			resp, err := http.Post(base+"/v1/images/edits", ctype, body)
			require.NoError(t, err)
			msg := readAll(t, resp)
			require.Equal(t, c.status, resp.StatusCode, msg)
			if c.status != http.StatusOK {
				assert.Contains(t, msg, c.want)
				return
			}
			var got imagesReply
			require.NoError(t, json.Unmarshal([]byte(msg), &got))
			require.Len(t, got.Data, 1)
			assert.Equal(t, image.Pt(40, 30), decodeB64PNG(t, got.Data[0].B64JSON).Bounds().Size())
		})
	}
}
