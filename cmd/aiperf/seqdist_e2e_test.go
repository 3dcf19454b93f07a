package main

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/seqdist"
)

// sentLengths is one profile_export.jsonl record's conversation and
// lengths.
type sentLengths struct {
	conv     string
	isl, osl int
}

// recordLengths reads the conversation, ISL and OSL of each record of the
// one profile_export.jsonl under dir.
func recordLengths(t *testing.T, dir string) []sentLengths {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_export.jsonl"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	f, err := os.Open(files[0])
	require.NoError(t, err)
	defer f.Close()
	var out []sentLengths
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Metadata struct {
				ConversationID string `json:"conversation_id"`
			} `json:"metadata"`
			Metrics struct {
				ISL struct{ Value int } `json:"input_sequence_length"`
				OSL struct{ Value int } `json:"output_sequence_length"`
			} `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		out = append(out, sentLengths{line.Metadata.ConversationID, line.Metrics.ISL.Value, line.Metrics.OSL.Value})
	}
	require.NoError(t, sc.Err())
	return out
}

// drawnLengths opens the synthetic dataset profile draws for a
// --sequence-distribution, seed 0 and entries distinct prompts, and
// returns each conversation's first-turn ISL and max_tokens by id.
func drawnLengths(t *testing.T, dist string, entries int) map[string][2]int {
	t.Helper()
	mix, err := seqdist.Parse(dist)
	require.NoError(t, err)
	ds, err := dataset.Open(context.Background(), defaultTokenizer(),
		dataset.Options{ISLMean: 550, Entries: entries, SeqDist: mix})
	require.NoError(t, err)
	defer ds.Close()
	out := map[string][2]int{}
	for i := range ds.Len() {
		c, err := ds.Conversation(i)
		require.NoError(t, err)
		out[c.ID] = [2]int{c.Turns[0].InputTokens, c.Turns[0].MaxTokens}
	}
	return out
}

// TestAIPerfSequenceDistributionTutorial runs the command line of AIPerf's
// docs/tutorials/sequence-distributions.md (Example Case: Chatbot Workload
// Simulation) unchanged against the mock: every request's ISL and OSL are
// the lengths drawn for its conversation from the mixture, the OSL being
// its max_tokens.
func TestAIPerfSequenceDistributionTutorial(t *testing.T) {
	const dist = "64|10,32|8:70;256|40,128|20:20;1024|100,512|50:10"
	drawn := drawnLengths(t, dist, 100)
	tutorial{
		doc: "docs/tutorials/sequence-distributions.md (Example Case: Chatbot Workload Simulation)",
		args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--endpoint", "/v1/chat/completions",
			"--streaming", "--url", "localhost:8000", "--sequence-distribution", dist},
		mock: mock.Config{Fast: true},
		check: func(t *testing.T, dir string) {
			records := recordLengths(t, dir)
			require.Len(t, records, 10, "the default count: max(10, 2×concurrency)")
			for _, r := range records {
				want, ok := drawn[r.conv]
				require.True(t, ok, "conversation %q", r.conv)
				assert.Equal(t, want, [2]int{r.isl, r.osl}, "conversation %s", r.conv)
			}
		},
	}.run(t, nil)
}

// With two well-separated modes, the requests split between them exactly
// as the seeded draw of their conversations did, and that split is within
// 4σ of the binomial for the weights.
func TestSequenceDistributionModes(t *testing.T) {
	const dist = "32,8:70;512,128:30"
	const n = 200
	drawn := drawnLengths(t, dist, n)
	tutorial{
		doc: "--seq-dist with two modes",
		args: []string{"profile", "-m", "m", "--url", "localhost:8000", "--seq-dist", dist, "--concurrency", "8",
			"--request-count", "200", "--num-dataset-entries", "200", "--dataset-sampling-strategy", "sequential"},
		mock: mock.Config{Fast: true},
		check: func(t *testing.T, dir string) {
			records := recordLengths(t, dir)
			require.Len(t, records, n)
			short, wantShort := 0, 0
			for _, r := range records {
				switch [2]int{r.isl, r.osl} {
				case [2]int{32, 8}:
					short++
				case [2]int{512, 128}:
				default:
					t.Fatalf("conversation %s: ISL %d, OSL %d is neither mode", r.conv, r.isl, r.osl)
				}
				if drawn[r.conv][0] == 32 {
					wantShort++
				}
			}
			assert.Equal(t, wantShort, short, "each request has its conversation's drawn mode")
			assert.InDelta(t, 0.7*n, short, 4*math.Sqrt(n*0.7*0.3), "70%% short, within 4σ")
		},
	}.run(t, nil)
}

// A --seq-dist that does not parse is refused before any traffic, naming
// where and what was expected.
func TestSequenceDistributionRefused(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	inv := cli(t, t.TempDir(), "profile", "-m", "m", "--url", m.URL, "--seq-dist", "64,32:70;256,x:30", "--no-store")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, `--sequence-distribution "64,32:70;256,x:30": at character 14: expected the OSL of entry 2 `+
		`(a whole number of tokens), got "x:30"`)
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
	assert.False(t, strings.Contains(inv.stdout, "Request Latency"))
}

// A recorded hour of think time is not replayed with --ignore-trace-delays
// or --inter-turn-delay-cap-seconds 0: every turn is sent (the 2-minute
// context is a hang guard: without them the run waits the hour).
func TestTraceDelayControls(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for _, flags := range [][]string{{"--ignore-trace-delays"}, {"--inter-turn-delay-cap-seconds", "0"}} {
		dir := t.TempDir()
		writeFile(t, dir, "chats.jsonl", `{"session_id": "a", "turns": [{"text": "hi", "output_length": 3}, `+
			`{"text": "again", "delay": 3600000, "output_length": 3}]}`+"\n")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		inv := cliCtx(ctx, t, dir, append([]string{"profile", "-m", "m", "--url", m.URL, "--input-file", "chats.jsonl",
			"--custom-dataset-type", "multi_turn", "--conversation-num", "1", "--no-store"}, flags...)...)
		cancel()
		require.Equal(t, ExitOK, inv.code, "%v: %s", flags, inv.stderr)
		assert.Contains(t, inv.stdout, "Request Count", flags)
	}
	inv := cli(t, t.TempDir(), "profile", "-m", "m", "--url", m.URL, "--ignore-trace-delays", "--inter-turn-delay-cap-seconds=-1")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--ignore-trace-delays applies to the timestamps and delays of --input-file's turns")
	assert.Contains(t, inv.stderr, "--inter-turn-delay-cap-seconds must be between 0 and 86400, got -1")
}
