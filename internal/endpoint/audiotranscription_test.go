package endpoint

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// formParts sends a form endpoint's JSON body through formBody, as the
// client does, and reads the form: its fields, and its file parts by name.
func formParts(t *testing.T, body []byte) (map[string]string, map[string]*multipart.Part, map[string][]byte) {
	t.Helper()
	require.True(t, json.Valid(body), "the body is JSON (inputs.json shows it)")
	body, ct, err := formBody(body)
	require.NoError(t, err)
	_, params, err := mime.ParseMediaType(ct)
	require.NoError(t, err)
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	fields, parts, files := map[string]string{}, map[string]*multipart.Part{}, map[string][]byte{}
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return fields, parts, files
		}
		require.NoError(t, err)
		b, err := io.ReadAll(p)
		require.NoError(t, err)
		if p.FileName() != "" {
			parts[p.FormName()], files[p.FormName()] = p, b
			continue
		}
		fields[p.FormName()] = string(b)
	}
}

// TestAudioTranscriptionBody: the model and every extra are fields (a
// "file" extra is not), and the turn's first audio is the "file" part,
// audio.<format> with its format's Content-Type.
func TestAudioTranscriptionBody(t *testing.T) {
	auds, err := media.Audios(context.Background(), media.AudioOptions{LengthMean: 0.05, Batch: 1, Format: media.FormatWAV}, 1, 1)
	require.NoError(t, err)
	req := Request{EndpointType: plan.EndpointAudioTranscription, Model: "whisper-1", Prompt: "not sent", Media: auds,
		Extra:     map[string]any{"language": "en", "temperature": 0.2, "file": "ignored"},
		TurnExtra: map[string]any{"response_format": "json"}}
	body, err := Body(req)
	require.NoError(t, err)
	fields, parts, files := formParts(t, body)
	assert.Equal(t, map[string]string{"model": "whisper-1", "language": "en", "temperature": "0.2", "response_format": "json"}, fields)
	require.Contains(t, parts, "file")
	assert.Equal(t, "audio.wav", parts["file"].FileName())
	assert.Equal(t, "audio/wav", parts["file"].Header.Get("Content-Type"))
	want, _ := base64.StdEncoding.DecodeString(auds[0].Data())
	assert.Equal(t, want, files["file"])

	// The current turn of a conversation is its last message.
	req.Media, req.Messages = nil, []Message{{Role: "user", Content: "a"}, {Role: "user", Media: auds}}
	body, err = Body(req)
	require.NoError(t, err)
	_, _, files = formParts(t, body)
	assert.Equal(t, want, files["file"])

	req.Messages = nil
	_, err = Body(req)
	assert.ErrorContains(t, err, "audio_transcription needs an audio, and this turn has none")
	req.Media = []media.Item{media.PassThrough(media.Audio, "https://example.com/a.wav")}
	_, err = Body(req)
	assert.ErrorContains(t, err, "uploads the audio's bytes, and this turn's audio is a URL")
}

// TestAudioMIME: AIPerf's Content-Type of each audio format, and the
// format of an audio known by its data URI only.
func TestAudioMIME(t *testing.T) {
	for format, want := range map[string]string{"wav": "audio/wav", "mp3": "audio/mpeg", "flac": "audio/flac", "ogg": "audio/ogg",
		"m4a": "audio/mp4", "mp4": "audio/mp4", "webm": "audio/webm", "opus": "audio/opus"} {
		assert.Equal(t, want, audioMIME(format), format)
	}
	for uri, want := range map[string]string{"data:audio/mpeg;base64,AA==": "mp3", "data:audio/x-flac;base64,AA==": "flac",
		"data:audio/ogg;base64,AA==": "ogg", "data:;base64,AA==": "wav"} {
		assert.Equal(t, want, audioFormat(&media.Item{Kind: media.Audio, URL: uri}), uri)
	}
}

// TestTranscriptionReplies: a reply is a success only with a string
// "text"; a "tokens" usage is kept, a "duration" one counts no tokens.
func TestTranscriptionReplies(t *testing.T) {
	auds, err := media.Audios(context.Background(), media.AudioOptions{LengthMean: 0.05, Batch: 1, Format: media.FormatWAV}, 1, 1)
	require.NoError(t, err)
	req := func(url string) Request {
		return Request{URL: url, EndpointType: plan.EndpointAudioTranscription, Model: "whisper-1", Media: auds}
	}
	checkReplies(t, req, []replyCase{
		{"text", `{"text": "hello world"}`, ""},
		{"empty text", `{"text": ""}`, ""},
		{"duration usage", `{"text": "hi", "usage": {"type": "duration", "seconds": 3}}`, ""},
		{"no text", `{"usage": {"type": "duration", "seconds": 3}}`, `not an audio transcription response (application/json): no "text" in the reply`},
		{"null text", `{"text": null}`, `no "text" in the reply`},
		{"text not a string", `{"text": 7}`, "text is a JSON number, not a string"},
		{"not an object", `["hello"]`, "not an audio transcription response"},
	})
	for body, want := range map[string]*[2]int{
		`{"text": "hi", "usage": {"type": "tokens", "input_tokens": 14, "output_tokens": 45, "total_tokens": 59}}`: {14, 45},
		`{"text": "hi", "usage": {"type": "duration", "seconds": 3}}`:                                              nil,
	} {
		srv := newRawServer(t, respond(fixed(200, "application/json", body)))
		res := newTestClient(t, Options{}).Do(context.Background(), req(srv.url("/")))
		require.Nil(t, res.Err)
		text, _ := res.Output()
		assert.Equal(t, "hi", text)
		if want == nil {
			assert.Nil(t, res.Usage, body)
			continue
		}
		require.NotNil(t, res.Usage, body)
		assert.Equal(t, [2]int{res.Usage.PromptTokens, res.Usage.CompletionTokens}, *want)
		assert.Empty(t, res.Usage.Untrusted)
	}
	srv := newRawServer(t, respond(fixed(200, "text/plain", "hello world")))
	res := newTestClient(t, Options{}).Do(context.Background(), req(srv.url("/")))
	require.NotNil(t, res.Err, "a plain-text transcript (response_format text) is not read, as in AIPerf")
	assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
}
