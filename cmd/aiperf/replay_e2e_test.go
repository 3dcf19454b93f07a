package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// tutorialInputsJSON is the inputs.json of AIPerf's inputs-json-replay.md
// (File Format), as the tutorial has the reader create it.
const tutorialInputsJSON = `{
  "data": [
    {
      "session_id": "session-001",
      "payloads": [
        {
          "messages": [{"role": "user", "content": "Hello"}],
          "model": "Qwen/Qwen3-0.6B",
          "max_tokens": 1024
        },
        {
          "messages": [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there!"},
            {"role": "user", "content": "How are you?"}
          ],
          "model": "Qwen/Qwen3-0.6B",
          "max_tokens": 1024
        }
      ]
    }
  ]
}
`

// TestReplayTutorials runs the command lines of AIPerf's replay tutorials
// unchanged against the mock.
func TestReplayTutorials(t *testing.T) {
	for name, c := range map[string]tutorial{
		"inputs.json replay": {
			doc: "docs/tutorials/inputs-json-replay.md (Basic Usage): the file's two payloads, each sent once as written",
			args: []string{"profile", "--input-file", "artifacts/my-benchmark/inputs.json", "--model", "Qwen/Qwen3-0.6B",
				"--custom-dataset-type", "inputs_json", "--streaming", "--url", "localhost:8000", "--concurrency", "4"},
			files: map[string]string{"artifacts/my-benchmark/inputs.json": tutorialInputsJSON},
			mock:  mock.Config{Fast: true},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				assert.Equal(t, 2, at["localhost:8000"].requests, "one session of two turns, once")
				exp := onlyExport(t, dir)
				assert.Equal(t, 2.0, metricAvg(t, exp, "request_count"))
				assertSentLengths(t, dir, map[[2]float64]int{{1, 1024}: 1, {8, 1024}: 1})
				assert.Equal(t, []string{
					`{"messages":[{"role":"user","content":"Hello"},{"role":"assistant","content":"Hi there!"},{"role":"user","content":"How are you?"}],"model":"Qwen/Qwen3-0.6B","max_tokens":1024}`,
					`{"messages":[{"role":"user","content":"Hello"}],"model":"Qwen/Qwen3-0.6B","max_tokens":1024}`,
				}, at["localhost:8000"].bodies, "each payload as written, compacted")
			},
		},
		"raw payload file": {
			doc: "docs/tutorials/raw-payload-replay.md (Basic Usage: Single File): each line one request, its body as written",
			args: []string{"profile", "--input-file", "payloads.jsonl", "--model", "Qwen/Qwen3-0.6B", "--custom-dataset-type", "raw_payload",
				"--streaming", "--url", "localhost:8000", "--concurrency", "2"},
			files: map[string]string{"payloads.jsonl": rawPayloads},
			mock:  mock.Config{Fast: true},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				assert.Equal(t, 3, at["localhost:8000"].requests, "3 lines, 3 requests")
				assert.Equal(t, compactLines(t, rawPayloads), at["localhost:8000"].bodies, "the lines, byte for byte")
				assertSentLengths(t, dir, map[[2]float64]int{{5, 100}: 1, {4, 200}: 1, {7, 150}: 1})
			},
		},
		"raw payload directory": {
			doc: "docs/tutorials/raw-payload-replay.md (Basic Usage: Directory for Multi-Turn Conversations): a conversation per file, its lines its turns",
			args: []string{"profile", "--input-file", "conversations/", "--model", "Qwen/Qwen3-0.6B", "--custom-dataset-type", "raw_payload",
				"--streaming", "--url", "localhost:8000", "--concurrency", "2"},
			files: map[string]string{"conversations/session_001.jsonl": rawSession1, "conversations/session_002.jsonl": rawSession2},
			mock:  mock.Config{Fast: true},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				assert.Equal(t, 4, at["localhost:8000"].requests, "2 sessions of 2 turns, once")
				assert.Equal(t, compactLines(t, rawSession1+rawSession2), at["localhost:8000"].bodies, "the lines, byte for byte")
				turns := map[string][]int{}
				for _, r := range profilingRecords(t, dir) {
					turns[r.Metadata.ConversationID] = append(turns[r.Metadata.ConversationID], 0)
				}
				assert.Equal(t, map[string][]int{"session_001": {0, 0}, "session_002": {0, 0}}, turns, "named by their files")
			},
		},
		"BurstGPT trace": {
			doc:    "AIPerf's Profile with BurstGPT Traces (BurstGPT Trace Format): its three example rows replayed on their timestamps",
			change: "the command line is this test's (the tutorial's run section names a downloaded file)",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming",
				"--url", "localhost:8000", "--input-file", "burst.csv", "--custom-dataset-type", "burst_gpt_trace"},
			files: map[string]string{"burst.csv": "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n" +
				"0.123,gpt-4,512,128,640,chat\n0.456,gpt-4,300,80,380,chat\n1.200,gpt-4,200,60,260,chat\n"},
			mock:   mock.Config{Fast: true},
			stdout: []string{"fixed"},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				assert.Equal(t, 3, at["localhost:8000"].requests, "3 rows, 3 requests")
				assertSentLengths(t, dir, map[[2]float64]int{{512, 128}: 1, {300, 80}: 1, {200, 60}: 1})
			},
		},
		"mooncake message deltas": {
			doc: "docs/benchmark-modes/trace-replay.md (Replaying Message Deltas with Live Responses): request 2 is the " +
				"first row's messages, the live reply to request 1, then the second row's",
			change: "output_length 8 and a delay of 20 ms instead of 512 and 2000",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming", "--url", "localhost:8000",
				"--input-file", "deltas.jsonl", "--custom-dataset-type", "mooncake_trace"},
			files: map[string]string{"deltas.jsonl": `{"session_id": "sess-1", "message_mode": "delta", "messages": [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Hello"}], "output_length": 8, "timestamp": 0}
{"session_id": "sess-1", "message_mode": "delta", "messages": [{"role": "user", "content": "How are you?"}], "output_length": 8, "delay": 20}
`},
			mock: mock.Config{Fast: true},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				require.Equal(t, 2, at["localhost:8000"].requests)
				type message struct{ Role, Content string }
				var second struct{ Messages []message }
				for _, b := range at["localhost:8000"].bodies {
					var body struct{ Messages []message }
					require.NoError(t, json.Unmarshal([]byte(b), &body))
					if len(body.Messages) > len(second.Messages) {
						second = body
					}
				}
				require.Len(t, second.Messages, 4, "the history, the live reply and the delta")
				assert.Equal(t, message{"system", "You are helpful."}, second.Messages[0])
				assert.Equal(t, message{"user", "Hello"}, second.Messages[1])
				assert.Equal(t, "assistant", second.Messages[2].Role)
				assert.NotEmpty(t, strings.TrimSpace(second.Messages[2].Content), "the live reply to request 1")
				assert.Equal(t, message{"user", "How are you?"}, second.Messages[3])
			},
		},
		"SageMaker capture": {
			doc: "docs/tutorials/sagemaker-data-capture.md (Download and Replay: single-file input): the captured requests on their times",
			change: "all_captures.jsonl holds the tutorial's capture line and two more a second apart, instead of a synced S3 " +
				"directory (a directory of captures is not read here yet)",
			args: []string{"profile", "--model", "my-model", "--endpoint-type", "chat", "--url", "localhost:8000",
				"--input-file", "all_captures.jsonl", "--custom-dataset-type", "sagemaker_data_capture", "--fixed-schedule",
				"--fixed-schedule-auto-offset"},
			files: map[string]string{"all_captures.jsonl": sageMakerCaptures},
			mock:  mock.Config{Fast: true},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				assert.Equal(t, 3, at["localhost:8000"].requests, "3 captures, 3 requests")
				assertSentLengths(t, dir, map[[2]float64]int{{4, 50}: 1, {5, 7}: 1, {1, 9}: 1})
				for _, b := range at["localhost:8000"].bodies {
					assert.Contains(t, b, `"model":"my-model"`, "the captured messages sent to --model")
				}
			},
		},
		"SageMaker capture window": {
			doc:    "docs/tutorials/sagemaker-data-capture.md (Replay a Time Window): offsets count from the first capture",
			change: "all_captures.jsonl instead of a synced S3 directory, --fixed-schedule-end-offset 1000 instead of 300000",
			args: []string{"profile", "--model", "my-model", "--endpoint-type", "chat", "--url", "localhost:8000",
				"--input-file", "all_captures.jsonl", "--custom-dataset-type", "sagemaker_data_capture", "--fixed-schedule",
				"--fixed-schedule-auto-offset", "--fixed-schedule-end-offset", "1000"},
			files: map[string]string{"all_captures.jsonl": sageMakerCaptures},
			mock:  mock.Config{Fast: true},
			after: func(t *testing.T, dir string, at map[string]tutorialServer) {
				assert.Equal(t, 2, at["localhost:8000"].requests, "the captures of the first second (0 and 1000 ms), not the one at 2000 ms")
			},
		},
	} {
		t.Run(name, func(t *testing.T) { c.run(t, nil) })
	}
}

// sageMakerCaptures is the capture line of AIPerf's sagemaker-data-capture.md
// and two more, one and two seconds later.
const sageMakerCaptures = `{"captureData":{"endpointInput":{"observedContentType":"application/json","mode":"INPUT","data":"{\"messages\":[{\"role\":\"user\",\"content\":\"What is AI?\"}],\"max_tokens\":50}","encoding":"JSON"},"endpointOutput":{"observedContentType":"application/json","mode":"OUTPUT","data":"{\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":30,\"total_tokens\":42}}","encoding":"JSON"}},"eventMetadata":{"eventId":"e4378ff2-2b43-4031-a21f-401bb3c3e038","inferenceTime":"2026-04-29T00:03:18Z"},"eventVersion":"0"}
{"captureData":{"endpointInput":{"data":"{\"messages\":[{\"role\":\"user\",\"content\":\"What is a GPU?\"}],\"max_tokens\":7}","encoding":"JSON"}},"eventMetadata":{"eventId":"2","inferenceTime":"2026-04-29T00:03:19Z"},"eventVersion":"0"}
{"captureData":{"endpointInput":{"data":"{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":9}","encoding":"JSON"}},"eventMetadata":{"eventId":"3","inferenceTime":"2026-04-29T00:03:20Z"},"eventVersion":"0"}
`

// The files of AIPerf's raw-payload-replay.md (Basic Usage), as its
// heredocs create them.
const (
	rawPayloads = `{"messages": [{"role": "user", "content": "What is machine learning?"}], "model": "Qwen/Qwen3-0.6B", "max_tokens": 100}
{"messages": [{"role": "user", "content": "Explain neural networks."}], "model": "Qwen/Qwen3-0.6B", "max_tokens": 200}
{"messages": [{"role": "user", "content": "How does backpropagation work?"}], "model": "Qwen/Qwen3-0.6B", "max_tokens": 150}
`
	rawSession1 = `{"messages": [{"role": "user", "content": "What is Python?"}], "model": "Qwen/Qwen3-0.6B", "max_tokens": 200}
{"messages": [{"role": "user", "content": "What is Python?"}, {"role": "assistant", "content": "Python is a programming language."}, {"role": "user", "content": "Show me a hello world example."}], "model": "Qwen/Qwen3-0.6B", "max_tokens": 200}
`
	rawSession2 = `{"messages": [{"role": "user", "content": "Explain REST APIs."}], "model": "Qwen/Qwen3-0.6B", "max_tokens": 300}
{"messages": [{"role": "user", "content": "Explain REST APIs."}, {"role": "assistant", "content": "REST is an architectural style..."}, {"role": "user", "content": "What about GraphQL?"}], "model": "Qwen/Qwen3-0.6B", "max_tokens": 300}
`
)

// compactLines is each line of a JSONL text compacted, sorted.
func compactLines(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		var b bytes.Buffer
		require.NoError(t, json.Compact(&b, []byte(l)))
		out = append(out, b.String())
	}
	return slices.Sorted(slices.Values(out))
}

// bodies records the bodies of the inference requests a mock is sent.
type bodies struct {
	mu   sync.Mutex
	list []string
}

func (b *bodies) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			body, _ := io.ReadAll(r.Body)
			b.mu.Lock()
			b.list = append(b.list, string(body))
			b.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// sorted is the bodies received, sorted.
func (b *bodies) sorted() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Sorted(slices.Values(b.list))
}

// An inputs.json that a run wrote is replayed byte for byte: the second
// server receives exactly the bodies the first did, each once.
func TestInputsJSONReplaysARun(t *testing.T) {
	var first, second bodies
	a := startMockBehind(t, mock.Config{Fast: true}, first.wrap)
	b := startMockBehind(t, mock.Config{Fast: true}, second.wrap)
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", bailianShort)
	inv := cli(t, dir, "profile", "-m", "m", "-u", a.URL, "--endpoint-type", "chat", "--streaming",
		"--input-file", "trace.jsonl", "--custom-dataset-type", "bailian_trace", "--no-fixed-schedule", "--concurrency", "3",
		"--extra-inputs", "temperature:0.25", "--artifact-dir", "first")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	inputs := filepath.Join(dir, "first", "inputs.json")
	inv = cli(t, dir, "profile", "-m", "m", "-u", b.URL, "--endpoint-type", "chat", "--streaming",
		"--input-file", inputs, "--concurrency", "3", "--artifact-dir", "second")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	sent := first.sorted()
	require.Len(t, sent, 6, "the trace's 6 requests")
	assert.Equal(t, sent, second.sorted(), "the same bodies, byte for byte, each once (the type detected from the file)")

	raw, err := os.ReadFile(inputs)
	require.NoError(t, err)
	var doc struct {
		Data []struct {
			Payloads []json.RawMessage `json:"payloads"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	var written []string
	for _, s := range doc.Data {
		for _, p := range s.Payloads {
			written = append(written, string(p))
		}
	}
	assert.Equal(t, sent, slices.Sorted(slices.Values(written)), "inputs.json holds the bodies sent")
}

// A trace cut short by --request-count writes inputs.json of what it sent:
// a trace's prompts are made from its lengths, so writing every row could
// cost gigabytes for a few requests.
func TestInputsJSONOfACutTraceHoldsWhatWasSent(t *testing.T) {
	var sent bodies
	m := startMockBehind(t, mock.Config{Fast: true}, sent.wrap)
	dir := t.TempDir()
	var trace strings.Builder
	for i := range 6 {
		fmt.Fprintf(&trace, "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": 4}\n", i*10, 50+i)
	}
	writeFile(t, dir, "trace.jsonl", trace.String())
	inv := cli(t, dir, "profile", "-m", "m", "-u", m.URL, "--endpoint-type", "chat", "--input-file", "trace.jsonl",
		"--custom-dataset-type", "mooncake_trace", "--no-fixed-schedule", "--concurrency", "1", "--request-count", "2",
		"--artifact-dir", "out", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	var doc struct {
		Data []struct {
			Payloads []json.RawMessage `json:"payloads"`
		} `json:"data"`
	}
	readJSONInto(t, filepath.Join(dir, "out", "inputs.json"), &doc)
	var written []string
	for _, s := range doc.Data {
		for _, p := range s.Payloads {
			written = append(written, string(p))
		}
	}
	require.Len(t, sent.sorted(), 2)
	assert.Equal(t, sent.sorted(), slices.Sorted(slices.Values(written)), "the 2 rows sent, not the trace's 6")
}
