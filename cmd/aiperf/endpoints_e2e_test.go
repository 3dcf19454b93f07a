package main

import (
	"bufio"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// jsonlMetrics reads each profile_export.jsonl line's metric values.
func jsonlMetrics(t *testing.T, path string) []map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]float64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Metrics map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		m := map[string]float64{}
		for k, v := range line.Metrics {
			var x float64
			if json.Unmarshal(v.Value, &x) == nil {
				m[k] = x
			}
		}
		out = append(out, m)
	}
	return out
}

// firstPayload is inputs.json's first payload.
func firstPayload(t *testing.T, path string) map[string]any {
	t.Helper()
	var doc struct {
		Data []struct {
			Payloads []map[string]any `json:"payloads"`
		} `json:"data"`
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	require.NotEmpty(t, doc.Data)
	return doc.Data[0].Payloads[0]
}

// TestEveryEndpointTypeAgainstTheMock: each endpoint type, streaming where
// its API streams, runs against the mock's route for it: AIPerf's metric set
// for the type, every request's ISL equal to the prompt tokens the mock
// counted (and OSL to its completion tokens), the body of AIPerf's shape.
func TestEveryEndpointTypeAgainstTheMock(t *testing.T) {
	const n = 6
	tests := []struct {
		typ       string
		streaming bool
		extra     []string
		path      string   // the route the mock saw
		keys      []string // the body's keys
		isl       float64  // every request's
		tokens    bool     // output metrics apply
		usage     bool     // the API reports usage
	}{
		{"chat", true, nil, "/v1/chat/completions", []string{"messages", "model", "max_completion_tokens", "stream", "stream_options"}, 16, true, true},
		{"embeddings", false, []string{"--prompt-batch-size", "3"}, "/v1/embeddings", []string{"input", "model"}, 48, false, true},
		{"chat_embeddings", false, nil, "/v1/embeddings", []string{"messages", "model"}, 16, false, true},
		{"nim_embeddings", false, nil, "/v1/embeddings", []string{"input", "model"}, 16, false, true},
		{"nim_rankings", false, []string{"--rankings-passages-mean", "3", "--rankings-passages-prompt-token-mean", "20",
			"--rankings-query-prompt-token-mean", "8"}, "/v1/ranking", []string{"model", "query", "passages"}, 68, false, true},
		{"hf_tei_rankings", false, []string{"--rankings-passages-mean", "2", "--rankings-passages-prompt-token-mean", "10",
			"--rankings-query-prompt-token-mean", "5"}, "/rerank", []string{"query", "texts"}, 25, false, false},
		{"cohere_rankings", false, []string{"--rankings-passages-mean", "2", "--rankings-passages-prompt-token-mean", "10",
			"--rankings-query-prompt-token-mean", "5"}, "/v2/rerank", []string{"model", "query", "documents"}, 25, false, true},
		{"responses", true, nil, "/v1/responses", []string{"input", "model", "max_output_tokens", "stream"}, 16, true, true},
		{"responses", false, nil, "/v1/responses", []string{"input", "model", "max_output_tokens", "stream"}, 16, true, true},
		{"messages", true, nil, "/v1/messages", []string{"messages", "model", "max_tokens", "stream"}, 16, true, true},
		{"messages", false, nil, "/v1/messages", []string{"messages", "model", "max_tokens"}, 16, true, true},
		{"huggingface_generate", true, nil, "/generate_stream", []string{"inputs", "parameters"}, 16, true, false},
		{"huggingface_generate", false, nil, "/generate", []string{"inputs", "parameters"}, 16, true, false},
		{"template", true, []string{"--extra-inputs", `payload_template:{"model": {{ model|tojson }}, "messages": [{"role": "user", "content": {{ text|tojson }}}], "max_tokens": {{ max_tokens }}, "stream": {{ stream|lower }}}`},
			"/v1/chat/completions", []string{"model", "messages", "max_tokens", "stream"}, 16, true, false},
	}
	for _, tc := range tests {
		name := tc.typ
		if tc.streaming {
			name += "/streaming"
		}
		t.Run(name, func(t *testing.T) {
			m := startMock(t, mock.Config{Fast: true, APIKey: "sk-test-secret"})
			dir := t.TempDir()
			url := m.URL
			if tc.typ == "template" {
				url += "/v1/chat/completions" // the template endpoint appends no path
			}
			args := []string{"profile", "-m", "mock-model", "-u", url, "--endpoint-type", tc.typ, "--ui", "none",
				"--osl", "4", "--request-count", "6", "--num-dataset-entries", "3", "--api-key", "sk-test-secret",
				"--artifact-dir", "out", "--no-store"}
			if !strings.HasSuffix(tc.typ, "_rankings") { // a rankings request has lengths of its own
				args = append(args, "--isl", "16")
			}
			if tc.streaming {
				args = append(args, "--streaming")
			}
			inv := cli(t, dir, append(args, tc.extra...)...)
			require.Equal(t, ExitOK, inv.code, inv.stderr)

			export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
			assert.Equal(t, float64(n), metricAvg(t, export, "request_count"))
			assert.Equal(t, tc.isl, metricAvg(t, export, "input_sequence_length"))
			for _, tag := range []string{"output_sequence_length", "output_token_throughput", "total_osl"} {
				assert.Equal(t, tc.tokens, export[tag] != nil, tag)
			}
			for _, tag := range []string{"time_to_first_token", "inter_token_latency", "inter_chunk_latency"} {
				assert.Equal(t, tc.tokens && tc.streaming, export[tag] != nil, tag)
			}
			if tc.tokens {
				assert.Equal(t, 4.0, metricAvg(t, export, "output_sequence_length"))
			}
			lines := jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl"))
			require.Len(t, lines, n)
			for _, l := range lines {
				assert.Equal(t, tc.isl, l["input_sequence_length"])
				if tc.usage {
					assert.Equal(t, l["input_sequence_length"], l["usage_prompt_tokens"], "the client counts what the mock counted")
				}
				if tc.usage && tc.tokens {
					assert.Equal(t, 4.0, l["usage_completion_tokens"])
					assert.Equal(t, 4.0, l["output_token_count"], "the client counts the text the mock sent")
				}
			}
			body := firstPayload(t, filepath.Join(dir, "out", "inputs.json"))
			got := make([]string, 0, len(body))
			for k := range body {
				got = append(got, k)
			}
			assert.ElementsMatch(t, tc.keys, got)

			c := m.control()
			assert.Equal(t, n, c.InferenceRequests)
			for _, e := range c.Events {
				if e.Kind == mock.EventRequestStart {
					assert.Equal(t, tc.path, e.Path)
					if tc.typ == "messages" {
						assert.Contains(t, e.HeaderNames, "X-Api-Key")
						assert.Contains(t, e.HeaderNames, "Anthropic-Version")
						assert.NotContains(t, e.HeaderNames, "Authorization")
					}
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "out", "profile_export_aiperf.json"))
			require.NoError(t, err)
			assert.NotContains(t, string(b), "sk-test-secret")
		})
	}
}

// TestEndpointFlagsRefusedBeforeTraffic: options that do not belong to the
// endpoint type, and broken templates, are exit 2 before any request.
func TestEndpointFlagsRefusedBeforeTraffic(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"rankings flag with chat", []string{"--rankings-passages-mean", "4"},
			"--rankings-passages-mean applies to the rankings endpoint types (nim_rankings, hf_tei_rankings, cohere_rankings), not chat"},
		{"rankings token flag with embeddings", []string{"--endpoint-type", "embeddings", "--rankings-query-prompt-token-mean", "4"},
			"--rankings-query-prompt-token-mean applies to the rankings endpoint types"},
		{"zero passages", []string{"--endpoint-type", "nim_rankings", "--rankings-passages-mean", "0"}, "--rankings-passages-mean must be at least 1"},
		{"batch with chat", []string{"--prompt-batch-size", "4"}, "--prompt-batch-size applies to the embeddings and nim_embeddings endpoint types, not chat"},
		{"template without template", []string{"--endpoint-type", "template"}, "--extra-inputs needs payload_template for --endpoint-type template"},
		{"template without the prompt", []string{"--endpoint-type", "template", "--extra-inputs", `payload_template:{"model": {{ model|tojson }}}`},
			"payload_template never uses the prompt"},
		{"template with a statement", []string{"--endpoint-type", "template", "--extra-inputs", `payload_template:{"t": {% if text %}1{% endif %}}`},
			"payload_template uses a {% … %} statement"},
		{"template that is not JSON", []string{"--endpoint-type", "template", "--extra-inputs", `payload_template:{"t": {{ text }}}`},
			"payload_template does not render a JSON object"},
		{"bad response_field", []string{"--endpoint-type", "template", "--extra-inputs", `payload_template:{"t": {{ text|tojson }}}`,
			"--extra-inputs", "response_field:a[x]"}, "response_field \"a[x]\" is not a path"},
		{"template key with chat", []string{"--extra-inputs", `payload_template:{"t": {{ text|tojson }}}`},
			"payload_template and response_field are read by --endpoint-type template (or raw), not chat"},
		{"raw without a file", []string{"--endpoint-type", "raw"}, "raw sends each record's payload as it is"},
		{"system prompt with embeddings", []string{"--endpoint-type", "embeddings", "--shared-system-prompt-length", "8"},
			"--shared-system-prompt-length needs an endpoint type whose body carries messages (chat, responses, messages, chat_embeddings), not embeddings"},
		{"turns with rankings", []string{"--endpoint-type", "nim_rankings", "--conversation-turn-mean", "3"},
			"--conversation-turn-mean does not apply to nim_rankings requests, which are single-turn"},
		{"turns with tgi", []string{"--endpoint-type", "huggingface_generate", "--conversation-turn-mean", "3"},
			"--conversation-turn-mean needs --endpoint-type chat, responses or messages"},
		{"rankings with a file", []string{"--endpoint-type", "cohere_rankings", "--input-file", "x.jsonl"}, "--input-file is not read by --endpoint-type cohere_rankings"},
		{"isl with rankings", []string{"--endpoint-type", "hf_tei_rankings", "--synthetic-input-tokens-mean", "100"},
			"--synthetic-input-tokens-mean (--isl, --prompt-input-tokens-mean) does not apply to --endpoint-type hf_tei_rankings, " +
				"whose query and passages have lengths of their own: give --rankings-query-prompt-token-mean and --rankings-passages-prompt-token-mean"},
		{"aiperf's isl alias beside the rankings lengths", []string{"--endpoint-type", "nim_rankings", "--rankings-passages-mean", "5",
			"--prompt-input-tokens-mean", "100"}, "--synthetic-input-tokens-mean (--isl, --prompt-input-tokens-mean) does not apply to --endpoint-type nim_rankings"},
		{"isl stddev with rankings", []string{"--endpoint-type", "cohere_rankings", "--prompt-input-tokens-stddev", "10"},
			"--synthetic-input-tokens-stddev (--isl-stddev, --prompt-input-tokens-stddev) does not apply to --endpoint-type cohere_rankings"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv := cli(t, "", append([]string{"profile", "-m", "mock-model", "-u", m.URL, "--ui", "none", "--no-store"}, tc.args...)...)
			assert.Equal(t, ExitUsage, inv.code, inv.stdout+inv.stderr)
			assert.Contains(t, inv.stderr, tc.want)
		})
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

// TestRankingsISLKeyRefusedBeforeTraffic: a config file's prompt length
// with a rankings endpoint is refused at its line, as the flag is.
func TestRankingsISLKeyRefusedBeforeTraffic(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "rankings.yaml", `benchmark:
  models: [mock-model]
  endpoint:
    urls: [`+m.URL+`]
    type: hf_tei_rankings
  datasets:
    default:
      type: synthetic
      prompts:
        isl: 100
  phases:
    - name: profiling
      type: concurrency
      requests: 3
`)
	inv := cli(t, dir, "profile", "--config", cfg, "--ui", "none", "--no-store")
	assert.Equal(t, ExitUsage, inv.code, inv.stdout+inv.stderr)
	assert.Contains(t, inv.stderr, "rankings.yaml:10: benchmark.datasets.default.prompts.isl (--isl, --prompt-input-tokens-mean) "+
		"does not apply to --endpoint-type hf_tei_rankings")
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

// TestRawEndpointSendsPayloads: raw sends each trace row's payload to the
// URL as it is and reads the reply wherever its text is.
func TestRawEndpointSendsPayloads(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	trace := writeFile(t, dir, "raw.jsonl",
		`{"payload": {"model": "mock-model", "messages": [{"role": "user", "content": "one two three"}], "max_tokens": 3}}`+"\n"+
			`{"payload": {"model": "mock-model", "messages": [{"role": "user", "content": "four five"}], "max_tokens": 2}}`+"\n")
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL+"/v1/chat/completions", "--endpoint-type", "raw", "--ui", "none",
		"--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--request-count", "4", "--artifact-dir", "out", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, 4.0, metricAvg(t, export, "request_count"))
	assert.Equal(t, 2.5, metricAvg(t, export, "output_sequence_length"))
	var paths []string
	for _, e := range m.control().Events {
		if e.Kind == mock.EventRequestStart {
			paths = append(paths, e.Path)
		}
	}
	assert.Equal(t, slices.Repeat([]string{"/v1/chat/completions"}, 4), paths, "the URL as it is, no path appended")
}

// TestRawEndpointNeedsPayloads: a trace without payloads is refused before
// any request.
func TestRawEndpointNeedsPayloads(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	trace := writeFile(t, dir, "lengths.jsonl", `{"input_length": 12, "output_length": 2}`+"\n")
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--endpoint-type", "raw", "--ui", "none",
		"--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--request-count", "2", "--no-store")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, `--endpoint-type raw sends each record's payload as it is, and the first record of`)
	assert.Zero(t, m.control().InferenceRequests)
}

// TestUseServerTokenCount: with --use-server-token-count ISL and the
// output counts are the server's usage, not the tokenizer's: against a
// mock that counts prompts its own way (one token per 4 bytes, no
// tokenizer), ISL is 16 tokens without the flag and the mock's count with
// it.
func TestUseServerTokenCount(t *testing.T) {
	srv, err := mock.New(mock.Config{Fast: true})
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	for _, server := range []bool{false, true} {
		dir := t.TempDir()
		args := []string{"profile", "-m", "mock-model", "-u", ts.URL, "--endpoint-type", "messages", "--streaming", "--ui", "none",
			"--isl", "16", "--osl", "4", "--request-count", "4", "--num-dataset-entries", "2", "--artifact-dir", "out", "--no-store"}
		if server {
			args = append(args, "--use-server-token-count")
		}
		inv := cli(t, dir, args...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		for _, l := range jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl")) {
			require.NotEqual(t, 16.0, l["usage_prompt_tokens"], "the mock counts differently")
			if server {
				assert.Equal(t, l["usage_prompt_tokens"], l["input_sequence_length"])
			} else {
				assert.Equal(t, 16.0, l["input_sequence_length"])
			}
			assert.Equal(t, 4.0, l["output_sequence_length"])
		}
	}
}

// TestUINoneKeepsNotes: --ui none prints nothing while the run goes but
// its notes and warnings (--streaming dropped for a type that cannot
// stream), not the rest of the run's log.
func TestUINoneKeepsNotes(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	inv := cli(t, "", "profile", "-m", "mock-model", "-u", m.URL, "--endpoint-type", "embeddings", "--streaming", "--ui", "none",
		"--request-count", "2", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "note: --endpoint-type embeddings does not stream: --streaming is ignored\n")
	assert.NotContains(t, inv.stderr, "tokens counted with")
}

// TestConversationsOverResponsesAndMessages: a multi-turn session over the
// Responses and Messages APIs re-sends its history (the system prompt as
// instructions / system), and every request's ISL is what the mock counted.
func TestConversationsOverResponsesAndMessages(t *testing.T) {
	for _, typ := range []string{"responses", "messages"} {
		t.Run(typ, func(t *testing.T) {
			m := startMock(t, mock.Config{Fast: true})
			dir := t.TempDir()
			inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--endpoint-type", typ, "--streaming", "--ui", "none",
				"--isl", "12", "--osl", "3", "--conversation-num", "2", "--conversation-turn-mean", "3",
				"--shared-system-prompt-length", "5", "--artifact-dir", "out", "--no-store")
			require.Equal(t, ExitOK, inv.code, inv.stderr)
			lines := jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl"))
			require.Len(t, lines, 6)
			grew := false
			for _, l := range lines {
				assert.Equal(t, l["usage_prompt_tokens"], l["input_sequence_length"])
				grew = grew || l["input_sequence_length"] > 17
			}
			assert.True(t, grew, "later turns carry the history")
		})
	}
}
