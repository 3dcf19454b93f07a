package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/mock"
)

// audioFileParts counts the transcription requests whose multipart body
// holds a "file" part of an audio Content-Type, then passes each request on
// unchanged.
func audioFileParts(n *atomic.Int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/audio/transcriptions" {
				next.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if _, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil {
				mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
				for p, err := mr.NextPart(); err == nil; p, err = mr.NextPart() {
					if p.FormName() == "file" && p.FileName() == "audio.wav" && p.Header.Get("Content-Type") == "audio/wav" {
						n.Add(1)
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// TestAudioTranscription: --endpoint-type audio_transcription uploads each
// request's synthetic audio as the multipart "file" part to
// /v1/audio/transcriptions; every reply is a transcript, and the run
// reports request latency but no token metrics (no TTFT, no OSL).
func TestAudioTranscription(t *testing.T) {
	var files atomic.Int64
	m := startMockBehind(t, mock.Config{TTFT: 2, ITL: 0.1}, audioFileParts(&files))
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "whisper-1", "-u", m.URL, "--endpoint-type", "audio_transcription",
		"--audio-length-mean", "1", "--request-count", "4", "--streaming", "--extra-inputs", "language:en",
		"--ui", "none", "--num-dataset-entries", "2")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	exp := onlyExport(t, dir)
	assert.Equal(t, false, exp["input_config"].(map[string]any)["endpoint"].(map[string]any)["streaming"], "--streaming is dropped")
	assert.Equal(t, 4.0, metricAvg(t, exp, "request_count"))
	assert.Zero(t, metricAvg(t, exp, "error_request_count"), "every request succeeded")
	assert.Equal(t, 1.0, metricAvg(t, exp, "audio_duration"), "each request carried a 1 s audio")
	assert.Positive(t, metricAvg(t, exp, "request_latency"))
	for _, tag := range []string{"time_to_first_token", "inter_token_latency", "output_sequence_length", "output_token_throughput", "input_sequence_length"} {
		assert.NotContains(t, exp, tag, "a transcription sends no text and generates no tokens")
	}
	assert.Equal(t, int64(4), files.Load(), "each request uploaded its audio as audio.wav")
	assert.Equal(t, 4, m.control().InferenceRequests)
	for _, e := range m.control().Events {
		assert.Equal(t, "/v1/audio/transcriptions", e.Path)
	}
	assert.Contains(t, inv.stdout, "Request Latency")
	assert.NotContains(t, inv.stdout, "Time to First Token")
}

// TestAudioTranscriptionRefused: what audio_transcription cannot send is
// refused with exit 2 before any request.
func TestAudioTranscriptionRefused(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"no audio":   {nil, "--endpoint-type audio_transcription uploads one audio a request: give --audio-length-mean"},
		"file extra": {[]string{"--audio-length-mean", "1", "--extra-inputs", "file:a.wav"}, "--extra-inputs file is the endpoint's"},
		"json": {[]string{"--audio-length-mean", "1", "--request-content-type", "application/json"},
			"requires multipart/form-data; application/json is not supported"},
	} {
		t.Run(name, func(t *testing.T) {
			inv := cli(t, "", append([]string{"profile", "-m", "whisper-1", "-u", m.URL, "--endpoint-type", "audio_transcription",
				"--request-count", "2", "--ui", "none"}, c.args...)...)
			assert.Equal(t, ExitUsage, inv.code, inv.stderr)
			assert.Contains(t, inv.stderr, c.want)
			assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
			assert.False(t, strings.Contains(inv.stdout, "Request Latency"))
		})
	}
}

// TestAudioTranscriptionExplicitMultipart: --request-content-type
// multipart/form-data, the type's own, sends the same uploads (the body is
// a form already, not re-encoded field by field).
func TestAudioTranscriptionExplicitMultipart(t *testing.T) {
	var files atomic.Int64
	m := startMockBehind(t, mock.Config{Fast: true}, audioFileParts(&files))
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "whisper-1", "-u", m.URL, "--endpoint-type", "audio_transcription",
		"--audio-length-mean", "0.5", "--request-count", "2", "--request-content-type", "multipart/form-data", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Zero(t, metricAvg(t, onlyExport(t, dir), "error_request_count"))
	assert.Equal(t, int64(2), files.Load())
}

// TestAudioTranscriptionInputFile: a single_turn record's audio (a local
// WAV) is the upload.
func TestAudioTranscriptionInputFile(t *testing.T) {
	var files atomic.Int64
	m := startMockBehind(t, mock.Config{Fast: true}, audioFileParts(&files))
	dir := t.TempDir()
	auds, err := media.Audios(context.Background(), media.AudioOptions{LengthMean: 0.5, Batch: 1, Format: media.FormatWAV}, 1, 1)
	require.NoError(t, err)
	wav, err := base64.StdEncoding.DecodeString(auds[0].Data())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.wav"), wav, 0o644))
	writeFile(t, dir, "in.jsonl", `{"text": "ignored", "audio": "a.wav"}`+"\n")
	inv := cli(t, dir, "profile", "-m", "whisper-1", "-u", m.URL, "--endpoint-type", "audio_transcription",
		"--input-file", "in.jsonl", "--custom-dataset-type", "single_turn", "--request-count", "2", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Zero(t, metricAvg(t, onlyExport(t, dir), "error_request_count"))
	assert.Equal(t, int64(2), files.Load())

	// A record without an audio (checked over every record), or with one
	// by URL (by the reader), is refused before any request.
	for file, want := range map[string]string{
		`{"text": "ignored", "audio": "a.wav"}` + "\n" + `{"text": "no audio"}` + "\n": "turn 0 has no audio",
		`{"text": "ignored", "audio": "https://example.com/a.wav"}` + "\n":             "must be a local file or a data URI, not a URL",
	} {
		writeFile(t, dir, "bad.jsonl", file)
		inv = cli(t, dir, "profile", "-m", "whisper-1", "-u", m.URL, "--endpoint-type", "audio_transcription",
			"--input-file", "bad.jsonl", "--custom-dataset-type", "single_turn", "--request-count", "2", "--ui", "none")
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, want)
	}
	assert.Equal(t, int64(2), files.Load(), "nothing sent by the refused runs")
}

// TestAudioTranscriptionWaitsForModel: the inference readiness probe of
// audio_transcription uploads an audio as the requests do (a probe without
// one is a request the server refuses, so the model was never "ready").
func TestAudioTranscriptionWaitsForModel(t *testing.T) {
	var files atomic.Int64
	m := startMockBehind(t, mock.Config{TTFT: 1, ITL: 0.1}, audioFileParts(&files))
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "whisper-1", "-u", m.URL, "--endpoint-type", "audio_transcription",
		"--audio-length-mean", "1", "--request-count", "2", "--ui", "none", "--num-dataset-entries", "1",
		"--wait-for-model-timeout", "30", "--wait-for-model-mode", "inference")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, int64(3), files.Load(), "the probe and both requests uploaded an audio.wav")
	assert.Equal(t, 2.0, metricAvg(t, onlyExport(t, dir), "request_count"), "the probe is not recorded")
}
