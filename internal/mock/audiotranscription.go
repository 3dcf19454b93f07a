package mock

import (
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"time"
)

// Audio transcription (OpenAI's /v1/audio/transcriptions): a multipart
// form with the audio as its "file" part and a "model" field. The audio
// (WAV or MP3, its duration read from its header or frames) is prefilled
// as its tokens are for chat (AudioTokens); the reply's text is
// TranscriptWordsPerSecond words a second of audio.

// TranscriptWordsPerSecond is the words of a transcript per second of
// audio (about 150 words a minute, conversational speech).
const TranscriptWordsPerSecond = 2.5

// TranscriptWords is the words the mock transcribes of an audio of the
// given duration (at least 1).
func TranscriptWords(seconds float64) int {
	return max(1, int(math.Round(seconds*TranscriptWordsPerSecond)))
}

// transcribe serves POST /v1/audio/transcriptions.
func (s *Server) transcribe(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	x := s.beginRequest(r)
	defer x.end()
	if !s.admitKey(w, r, x) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
	raw, secs, err := readTranscriptionForm(r)
	if err != nil {
		x.fail(w, requestStatus(err), "invalid_request_error", err.Error())
		return
	}
	g := s.prefillGeneration("asr-", []segment{{ids: mediaIDs(raw, AudioTokens(secs))}})
	text := g.text(0, TranscriptWords(secs))
	s.prefillOnly(w, r, x, g, arrival, nil, func() any {
		return map[string]any{"text": text, "usage": map[string]any{"type": "duration", "seconds": math.Round(secs*1000) / 1000}}
	})
}

// readTranscriptionForm reads a transcription's multipart form (at most
// 32 MiB held in memory, the rest spilled to disk and removed): its
// "model" and its "file", an audio/* part holding a WAV or an MP3, whose
// bytes and duration it returns.
func readTranscriptionForm(r *http.Request) ([]byte, float64, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		return nil, 0, errors.New("an audio transcription is a multipart/form-data body (a file part and a model field)")
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		return nil, 0, fmt.Errorf("read the multipart form: %w", err)
	}
	defer r.MultipartForm.RemoveAll()
	if r.FormValue("model") == "" {
		return nil, 0, errors.New("model is required")
	}
	files := r.MultipartForm.File["file"]
	if len(files) == 0 {
		return nil, 0, errors.New(`file is required: the audio to transcribe, as the "file" part`)
	}
	ct := files[0].Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	f, err := files[0].Open()
	if err != nil {
		return nil, 0, fmt.Errorf("file: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, fmt.Errorf("file: %w", err)
	}
	var format string
	switch mt {
	case "audio/wav", "audio/x-wav", "audio/wave":
		format = "wav"
	case "audio/mpeg", "audio/mp3":
		format = "mp3"
	default:
		return nil, 0, fmt.Errorf("file: Content-Type %q: expected an audio, audio/wav or audio/mpeg", ct)
	}
	secs, err := audioSeconds(raw, format)
	if err != nil {
		return nil, 0, fmt.Errorf("file: invalid %s data: %w", mt, err)
	}
	return raw, secs, nil
}
