package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// forms records the multipart/form-data bodies a server received, each as
// its parts (name, file name, Content-Type and the data's digest), sorted:
// the form sent, whatever its boundary.
type forms struct {
	mu   sync.Mutex
	list []string
}

func (f *forms) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "multipart/form-data" {
			var parts []string
			mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
			for p, err := mr.NextPart(); err == nil; p, err = mr.NextPart() {
				data, _ := io.ReadAll(p)
				parts = append(parts, fmt.Sprintf("%s %q %s %x", p.FormName(), p.FileName(), p.Header.Get("Content-Type"), sha256.Sum256(data)))
			}
			slices.Sort(parts)
			f.mu.Lock()
			f.list = append(f.list, strings.Join(parts, "\n"))
			f.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// distinct is the forms received, each once, sorted.
func (f *forms) distinct() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Compact(slices.Sorted(slices.Values(f.list)))
}

// TestFormEndpointsInputsJSON: the inputs.json of image_edit and
// audio_transcription is JSON, each payload AIPerf's (its file as
// {"b64_data", "filename", "content_type"}), and replayed it sends the
// same multipart forms, file parts included. It was the raw multipart body
// (binary bytes in a .json file that no JSON reader takes).
func TestFormEndpointsInputsJSON(t *testing.T) {
	for et, c := range map[string]struct {
		args             []string
		file, name, mime string
	}{
		"image_edit": {[]string{"--image-width-mean", "16", "--image-height-mean", "16", "--extra-inputs", "size:16x16"},
			"image", "image.png", "image/png"},
		"audio_transcription": {[]string{"--audio-length-mean", "0.2", "--extra-inputs", "language:en"}, "file", "audio.wav", "audio/wav"},
	} {
		t.Run(et, func(t *testing.T) {
			var first, second forms
			a := startMockBehind(t, mock.Config{Fast: true}, first.wrap)
			b := startMockBehind(t, mock.Config{Fast: true}, second.wrap)
			dir := t.TempDir()
			inv := cli(t, dir, append([]string{"profile", "-m", "m", "-u", a.URL, "--endpoint-type", et, "--request-count", "2",
				"--num-dataset-entries", "2", "--artifact-dir", "first", "--no-store", "--ui", "none"}, c.args...)...)
			require.Equal(t, ExitOK, inv.code, inv.stderr)

			var doc struct {
				Data []struct {
					Payloads []map[string]any `json:"payloads"`
				} `json:"data"`
			}
			inputs := filepath.Join(dir, "first", "inputs.json")
			readJSONInto(t, inputs, &doc)
			require.Len(t, doc.Data, 2)
			for _, s := range doc.Data {
				require.Len(t, s.Payloads, 1)
				p := s.Payloads[0]
				assert.Equal(t, "m", p["model"])
				file, ok := p[c.file].(map[string]any)
				require.True(t, ok, "the %s part is an object: %v", c.file, p[c.file])
				assert.Equal(t, c.name, file["filename"])
				assert.Equal(t, c.mime, file["content_type"])
				assert.NotEmpty(t, file["b64_data"])
			}

			inv = cli(t, dir, "profile", "-m", "m", "-u", b.URL, "--endpoint-type", et, "--input-file", inputs,
				"--artifact-dir", "second", "--no-store", "--ui", "none")
			require.Equal(t, ExitOK, inv.code, inv.stderr)
			var exp map[string]any
			readJSONInto(t, filepath.Join(dir, "second", "profile_export_aiperf.json"), &exp)
			assert.Equal(t, 2.0, metricAvg(t, exp, "request_count"), "each payload once")
			assert.Zero(t, metricAvg(t, exp, "error_request_count"), "each a form the server read")
			sent := first.distinct()
			require.NotEmpty(t, sent)
			assert.Subset(t, second.distinct(), sent, "the replay sent the forms the first run did")
			for _, f := range sent {
				assert.Contains(t, f, fmt.Sprintf("%s %q", c.file, c.name), "with the file part")
			}
		})
	}
}
