package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// replying answers the requests to path with body (of Content-Type ct) and
// passes the others on to the mock.
func replying(path, ct, body string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != path {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write([]byte(body))
		})
	}
}

// usageVerdicts reads profile_export.jsonl in dir: each line's
// usage_untrusted ("" when trusted) and its usage_prompt_tokens (0 when
// not there).
func usageVerdicts(t *testing.T, dir string) (untrusted []string, prompt []float64) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "profile_export.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Metadata struct {
				UsageUntrusted string `json:"usage_untrusted"`
			} `json:"metadata"`
			Metrics struct {
				Prompt struct{ Value float64 } `json:"usage_prompt_tokens"`
			} `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		untrusted, prompt = append(untrusted, l.Metadata.UsageUntrusted), append(prompt, l.Metrics.Prompt.Value)
	}
	require.NoError(t, sc.Err())
	return untrusted, prompt
}

// TestOpenAIImagesUsage: the usage of OpenAI's Images API (gpt-image-1:
// input_tokens, output_tokens and their details) is read and trusted, for
// a generation and an edit, beside an --osl the request does not send. It
// was refused ("prompt_tokens is missing") and every request counted as a
// usage discrepancy, with a warning that the server's usage was
// implausible.
func TestOpenAIImagesUsage(t *testing.T) {
	const reply = `{"created": 1, "data": [{"b64_json": "iVBORw0KGgoAAAAA"}], "usage": {"total_tokens": 4210,
		"input_tokens": 50, "output_tokens": 4160, "input_tokens_details": {"text_tokens": 10, "image_tokens": 40}}}`
	for et, args := range map[string][]string{
		"image_generation": nil,
		"image_edit":       {"--image-width-mean", "16", "--image-height-mean", "16"},
	} {
		t.Run(et, func(t *testing.T) {
			path := map[string]string{"image_generation": "/v1/images/generations", "image_edit": "/v1/images/edits"}[et]
			m := startMockBehind(t, mock.Config{Fast: true}, replying(path, "application/json", reply))
			dir := t.TempDir()
			inv := cli(t, dir, append([]string{"profile", "-m", "gpt-image-1", "-u", m.URL, "--endpoint-type", et,
				"--request-count", "2", "--isl", "16", "--osl", "8", "--artifact-dir", "out", "--no-store", "--ui", "none"}, args...)...)
			require.Equal(t, ExitOK, inv.code, inv.stderr)
			untrusted, prompt := usageVerdicts(t, filepath.Join(dir, "out"))
			assert.Equal(t, []string{"", ""}, untrusted, "the usage is trusted")
			assert.Equal(t, []float64{50, 50}, prompt, "input_tokens are the prompt tokens")
			assert.NotContains(t, inv.stdout+inv.stderr, "implausible")
			assert.False(t, strings.Contains(inv.stdout+inv.stderr, "prompt_tokens is missing"))
		})
	}
}

// TestUsageProblemsNameTheAPIsFields: a Messages or Responses stream
// whose usage claims more output than max_tokens is refused naming
// output_tokens, the field the server sent, as docs/response-checks.md
// promises. It named chat's completion_tokens, which neither API has.
func TestUsageProblemsNameTheAPIsFields(t *testing.T) {
	sse := func(events ...string) string {
		var b strings.Builder
		for i := 0; i+1 < len(events); i += 2 {
			b.WriteString("event: " + events[i] + "\ndata: " + events[i+1] + "\n\n")
		}
		return b.String()
	}
	for et, c := range map[string]struct{ path, body, want string }{
		"messages": {"/v1/messages", sse(
			"message_start", `{"type":"message_start","message":{"type":"message","role":"assistant","content":[],"usage":{"input_tokens":16,"output_tokens":1}}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" hello"}}`,
			"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7777}}`,
			"message_stop", `{"type":"message_stop"}`),
			"output_tokens 7777 exceeds the 8 max tokens requested"},
		"responses": {"/v1/responses", sse(
			"response.output_text.delta", `{"type":"response.output_text.delta","delta":" hello"}`,
			"response.completed", `{"type":"response.completed","response":{"object":"response","status":"completed","output":[],`+
				`"usage":{"input_tokens":16,"output_tokens":9999,"total_tokens":10015}}}`),
			"output_tokens 9999 exceeds the 8 max tokens requested"},
	} {
		t.Run(et, func(t *testing.T) {
			m := startMockBehind(t, mock.Config{Fast: true}, replying(c.path, "text/event-stream", c.body))
			dir := t.TempDir()
			inv := cli(t, dir, "profile", "-m", "m", "-u", m.URL, "--endpoint-type", et, "--streaming", "--request-count", "2",
				"--isl", "16", "--osl", "8", "--artifact-dir", "out", "--no-store", "--ui", "none")
			require.Equal(t, ExitOK, inv.code, inv.stderr)
			untrusted, _ := usageVerdicts(t, filepath.Join(dir, "out"))
			assert.Equal(t, []string{c.want, c.want}, untrusted)
		})
	}
}
