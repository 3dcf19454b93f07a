package mock

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
)

// transcriptionForm is a transcription request's body: a model field
// (when not "") and a file part (when file is not nil) of the given
// Content-Type.
func transcriptionForm(t *testing.T, model string, file []byte, contentType string) (*bytes.Buffer, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if model != "" {
		require.NoError(t, w.WriteField("model", model))
	}
	require.NoError(t, w.WriteField("language", "en"))
	if file != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="audio.wav"`)
		h.Set("Content-Type", contentType)
		part, err := w.CreatePart(h)
		require.NoError(t, err)
		_, _ = part.Write(file)
	}
	require.NoError(t, w.Close())
	return &buf, w.FormDataContentType()
}

// TestAudioTranscription: /v1/audio/transcriptions reads the "file" part
// (a WAV's duration from its header) and answers TranscriptWords words and
// a duration usage after its latency; a request without a file, a model or
// an audio is a 400 in OpenAI's error shape.
func TestAudioTranscription(t *testing.T) {
	s, base := start(t, Config{TTFT: 30, ITL: 1})
	auds, err := media.Audios(context.Background(), media.AudioOptions{LengthMean: 2, Batch: 1, Format: media.FormatWAV}, 1, 1)
	require.NoError(t, err)
	wav, err := base64.StdEncoding.DecodeString(auds[0].Data())
	require.NoError(t, err)

	body, ct := transcriptionForm(t, "whisper-1", wav, "audio/wav")
	began := time.Now()
	resp, err := http.Post(base+"/v1/audio/transcriptions", ct, body)
	require.NoError(t, err)
	raw := readAll(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, raw)
	assert.GreaterOrEqual(t, time.Since(began), 30*time.Millisecond, "answered after the prefill (--ttft)")
	var got struct {
		Text  string `json:"text"`
		Usage struct {
			Type    string  `json:"type"`
			Seconds float64 `json:"seconds"`
		} `json:"usage"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &got))
	assert.Len(t, strings.Fields(got.Text), TranscriptWords(2))
	assert.Equal(t, 5, TranscriptWords(2))
	assert.Equal(t, "duration", got.Usage.Type)
	assert.InDelta(t, 2, got.Usage.Seconds, 0.001)
	assert.Equal(t, 1, s.Control().InferenceRequests)

	for name, c := range map[string]struct {
		model, ct string
		file      []byte
		want      string
	}{
		"no file":   {"whisper-1", "", nil, "file is required"},
		"no model":  {"", "audio/wav", wav, "model is required"},
		"not audio": {"whisper-1", "image/png", wav, `Content-Type "image/png": expected an audio`},
		"bad wav":   {"whisper-1", "audio/wav", []byte("RIFF"), "file: invalid audio/wav data"},
	} {
		t.Run(name, func(t *testing.T) {
			body, ct := transcriptionForm(t, c.model, c.file, c.ct)
			resp, err := http.Post(base+"/v1/audio/transcriptions", ct, body)
			require.NoError(t, err)
			raw := readAll(t, resp)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			var e struct {
				Error struct {
					Message, Type string
					Code          int
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(raw), &e), raw)
			assert.Contains(t, e.Error.Message, c.want)
			assert.Equal(t, "invalid_request_error", e.Error.Type)
			assert.Equal(t, 400, e.Error.Code)
		})
	}
	resp = post(t, base+"/v1/audio/transcriptions", map[string]any{"model": "whisper-1", "file": "x"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, readAll(t, resp), "is a multipart/form-data body")
}
