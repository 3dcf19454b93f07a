package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

func startMock(t *testing.T, cfg mock.Config) (*mock.Server, string) {
	t.Helper()
	tok, err := tokenizer.Load(tokenizer.Default)
	require.NoError(t, err)
	cfg.CountTokens = tok.Count
	srv, err := mock.New(cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return srv, ts.URL
}

func profile(url string) plan.Profile {
	p := plan.NewProfile()
	p.Model = []string{"mock-model"}
	p.URL = []string{url}
	p.Streaming = true
	p.SyntheticInputTokensMean = 24
	p.OutputTokensMean = plan.Ptr(5)
	p.NumDatasetEntries = 4
	p.Concurrency = plan.Ptr(3)
	p.RequestCount = plan.Ptr(12)
	return p
}

func TestRunSeparatesWarmupAndCountsTokens(t *testing.T) {
	srv, url := startMock(t, mock.Config{Fast: true})
	p := profile(url)
	p.WarmupRequestCount = plan.Ptr(4)
	run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, run.Status)
	require.Len(t, run.Records, 16)
	kinds := map[string]int{}
	for _, r := range run.Records {
		kinds[r.PhaseKind]++
		assert.True(t, r.OK(), "%+v", r.Error)
		assert.Equal(t, 5, r.OutputTokens, "client count, filled after the run")
		require.NotNil(t, r.Usage)
		assert.Equal(t, 5, r.Usage.CompletionTokens)
		assert.Equal(t, 24, r.InputTokens)
		assert.Equal(t, r.Usage.PromptTokens, r.InputTokens, "mock and client count the prompt alike")
		assert.NotZero(t, r.WallStartNs)
		assert.LessOrEqual(t, r.ScheduledNs, r.SentNs)
	}
	assert.Equal(t, map[string]int{plan.KindWarmup: 4, plan.KindProfiling: 12}, kinds)
	count, _ := run.Profiling.Get("request_count")
	assert.Equal(t, 12.0, count.Value)
	require.NotNil(t, run.Warmup)
	wcount, _ := run.Warmup.Get("request_count")
	assert.Equal(t, 4.0, wcount.Value)
	assert.Equal(t, "concurrency", run.Audit.Mode)
	assert.NotNil(t, run.Audit.SendLagMs)
	assert.Equal(t, 16, srv.Control().InferenceRequests)
	assert.Empty(t, run.ControlHooks, "no hook was asked for")
}

func TestRunResetFailureSendsNothing(t *testing.T) {
	srv, url := startMock(t, mock.Config{Fast: true, AdminFailStatus: 404, AdminFailCount: 1})
	p := profile(url)
	p.ResetKVCache = true
	run, err := Run(context.Background(), Options{Profile: p})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(no load was sent)")
	assert.Equal(t, result.StatusFailed, run.Status)
	assert.Empty(t, run.Records)
	require.Len(t, run.ControlHooks, 1)
	assert.Equal(t, 404, run.ControlHooks[0].Status)
	assert.Zero(t, srv.Control().InferenceRequests)
}

func TestRunProfilerStartFailureSendsNoProfilingRequest(t *testing.T) {
	// Admin calls in order: start_profile is the first one, and it fails.
	srv, url := startMock(t, mock.Config{Fast: true, AdminFailStatus: 500, AdminFailCount: 1})
	p := profile(url)
	p.ServerProfiler = true
	p.WarmupRequestCount = plan.Ptr(2)
	run, err := Run(context.Background(), Options{Profile: p})
	require.Error(t, err)
	for _, r := range run.Records {
		assert.Equal(t, plan.KindWarmup, r.PhaseKind, "warmup ran, profiling never started")
	}
	assert.Equal(t, 2, srv.Control().InferenceRequests)
}

func TestRunEveryRequestFailed(t *testing.T) {
	_, url := startMock(t, mock.Config{Fast: true, ErrorRate: 100})
	run, err := Run(context.Background(), Options{Profile: profile(url)})
	require.ErrorIs(t, err, ErrAllFailed)
	assert.Equal(t, result.StatusFailed, run.Status)
	require.Len(t, run.ErrorSummary, 1)
	assert.Equal(t, metrics.Error{Code: 500, Type: "HTTPError", Message: run.ErrorSummary[0].Error.Message}, run.ErrorSummary[0].Error)
	assert.Equal(t, 12, run.ErrorSummary[0].Count)
	assert.Contains(t, err.Error(), "12 of 12 (e.g. HTTPError 500")
}

func TestRunEveryRequestCutByGracePeriod(t *testing.T) {
	_, url := startMock(t, mock.Config{TTFT: 60000, ITL: 1})
	p := profile(url)
	p.RequestCount = nil
	p.BenchmarkDuration = plan.Ptr(0.5)
	p.BenchmarkGracePeriod = plan.Ptr(0.0)
	run, err := Run(context.Background(), Options{Profile: p})
	require.ErrorIs(t, err, ErrAllFailed)
	n := len(run.Records) // each of the 3 slots sends once: none is answered before the end
	require.True(t, n >= 1 && n <= 3, "%d records", n)
	assert.Equal(t, fmt.Sprintf("no profiling request completed: all %d were cut (%d still in flight at the end of the grace period), excluded", n, n), err.Error(),
		"none failed: the message does not say they did")
	assert.Empty(t, run.ErrorSummary, "cut requests are not errors")
	for _, r := range run.Records {
		assert.True(t, r.Cancelled)
	}
}

func TestRunInterrupted(t *testing.T) {
	srv, url := startMock(t, mock.Config{TTFT: 5, ITL: 5})
	p := profile(url)
	p.RequestCount = plan.Ptr(10000)
	p.ServerProfiler = true
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for srv.Control().InferenceRequests < 6 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	run, err := Run(ctx, Options{Profile: p})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, result.StatusInterrupted, run.Status)
	assert.True(t, run.WasCancelled)
	c := srv.Control()
	assert.Equal(t, 1, c.ProfilerStarts)
	assert.Equal(t, 1, c.ProfilerStops, "Ctrl-C after a start still stops the profiler")
	for _, r := range run.Records {
		if r.Error != nil {
			assert.True(t, r.Cancelled, "in-flight requests are cut, not counted as errors")
		}
	}
}

func TestRunRateCapIsReportedNotClientBound(t *testing.T) {
	_, url := startMock(t, mock.Config{TTFT: 20, ITL: 1})
	for _, policy := range []string{plan.CapDelay, ""} {
		p := profile(url)
		p.Concurrency = plan.Ptr(1)
		p.RequestRate = plan.Ptr(500.0)
		p.RequestRateMode = plan.RateConstant
		p.RequestCount = plan.Ptr(10)
		p.CapPolicy = policy
		run, err := Run(context.Background(), Options{Profile: p})
		require.NoError(t, err)
		assert.Equal(t, "rate", run.Audit.Mode)
		assert.Equal(t, 500.0, run.Audit.TargetRate)
		warnings := strings.Join(run.Audit.Warnings, "\n")
		// A full cap is the server's limit, not the client's: never "fell
		// behind". (A send's own lag after its tick is the client's, and a
		// loaded test machine can stall one beyond the limit.)
		assert.NotContains(t, warnings, "fell behind")
		if policy == plan.CapDelay {
			assert.GreaterOrEqual(t, run.Audit.CapDelayed, 8, "each request of 20 ms or more blocks the next sends at 2 ms gaps")
			assert.Zero(t, run.Audit.CapSkipped)
			assert.Contains(t, warnings, "waited for a free in-flight slot")
			assert.NotContains(t, warnings, "send lag", "a send that waited for the cap is not late")
		} else { // AIPerf's: the sends that find the cap full are dropped
			assert.Zero(t, run.Audit.CapDelayed)
			assert.GreaterOrEqual(t, run.Audit.CapSkipped, 8*9, "9 ticks of 2 ms or more pass during each request of 20 ms or more")
			assert.Contains(t, warnings, "skipped because the --concurrency cap was full")
			require.NotNil(t, run.Audit.SendLagMs)
			assert.Equal(t, run.Audit.SendLagMs.P99 > 10, strings.Contains(warnings, "send lag"),
				"send lag is reported exactly when the sent requests' p99 lag exceeds 10 ms (%.2f ms)", run.Audit.SendLagMs.P99)
		}
	}
}

func TestRedactedConfigAndHeaders(t *testing.T) {
	srv, url := startMock(t, mock.Config{Fast: true, APIKey: "sk-bench"})
	p := profile(url)
	p.APIKey = "sk-bench"
	p.Header = []string{"X-Team: a"}
	p.ResetKVCache = true
	run, err := Run(context.Background(), Options{Profile: p})
	require.NoError(t, err, "the API key reaches the inference routes")
	assert.Equal(t, plan.Redacted, run.Config.APIKey)
	ev := srv.Control().Events[0]
	assert.Equal(t, mock.EventReset, ev.Kind)
	assert.Contains(t, ev.HeaderNames, "Authorization", "hooks carry the credential")
	assert.Contains(t, ev.HeaderNames, "X-Team")
}

// TestAbsurdUsageIsNotTrusted: a server claiming a million completion
// tokens for a 5-token reply (or a negative count) does not set the OSL or
// the throughput; the client's count does, and the run says so.
func TestAbsurdUsageIsNotTrusted(t *testing.T) {
	usages := []string{
		`{"prompt_tokens":24,"completion_tokens":1000000,"total_tokens":1000024}`,
		`{"prompt_tokens":24,"completion_tokens":-5,"total_tokens":19}`,
		`{"prompt_tokens":24,"completion_tokens":5,"total_tokens":29}`,
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r) // a scrape of /metrics, whenever it comes, takes no turn of the cycle
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, tok := range []string{" one", " two", " three", " four", " five"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", tok)
		}
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":%s}\n\ndata: [DONE]\n\n", usages[int(n.Add(1)-1)%len(usages)])
	}))
	t.Cleanup(srv.Close)
	p := profile(srv.URL)
	p.Concurrency = plan.Ptr(1)
	p.RequestCount = plan.Ptr(9)
	run, err := Run(context.Background(), Options{Profile: p})
	require.NoError(t, err)
	osl, _ := run.Profiling.Get(metrics.TagOSL)
	require.NotNil(t, osl.Stats)
	assert.Equal(t, 5.0, osl.Stats.Max, "no request is a million tokens long")
	assert.Equal(t, 5.0, osl.Stats.Min, "nor negative")
	total, _ := run.Profiling.Get(metrics.TagTotalOSL)
	assert.Equal(t, 45.0, total.Value)
	disc, ok := run.Profiling.Get(metrics.TagUsageDiscrepancyCount)
	require.True(t, ok)
	assert.Equal(t, 6.0, disc.Value)
	assert.Equal(t, 6, run.Audit.UsageUntrusted)
	assert.Contains(t, strings.Join(run.Audit.Warnings, "\n"), "6 requests reported implausible token usage")
	untrusted := 0
	for _, r := range run.Records {
		if r.Usage != nil && r.Usage.Untrusted != "" {
			untrusted++
		}
	}
	assert.Equal(t, 6, untrusted, "flagged per request")
}

// TestFileConversationsAreSentInTheirOrder: a file's conversations are
// drawn sequentially (AIPerf's default for files), each once per pass,
// whatever prepares them ahead of time.
func TestFileConversationsAreSentInTheirOrder(t *testing.T) {
	_, url := startMock(t, mock.Config{Fast: true})
	var file strings.Builder
	for i := range 10 {
		fmt.Fprintf(&file, `{"text": "prompt number %d", "output_length": 2}`+"\n", i)
	}
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(file.String()), 0o644))
	p := profile(url)
	p.InputFile, p.CustomDatasetType = path, "single_turn"
	p.Concurrency, p.RequestCount = plan.Ptr(1), plan.Ptr(15)
	run, err := Run(context.Background(), Options{Profile: p})
	require.NoError(t, err)
	require.Len(t, run.Records, 15)
	slices.SortFunc(run.Records, func(a, b metrics.Record) int { return a.Index - b.Index })
	for i, r := range run.Records {
		assert.Equal(t, i%10, r.Prompt, "request %d sends conversation %d", i, i%10)
		assert.Equal(t, 2, r.RequestedOutputTokens, "the record's output_length")
	}
}

// A trace replayed without a count sends each line once: a session's turns
// all, every session once; an explicit --request-count still wins, and a
// single_turn file keeps the default count.
func TestTraceIsReplayedOnce(t *testing.T) {
	_, url := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	require.NoError(t, os.WriteFile(trace, []byte(`{"session_id": "a", "text_input": "one", "output_length": 1}
{"session_id": "b", "text_input": "two", "output_length": 1}
{"session_id": "a", "text_input": "three", "output_length": 1}
`), 0o644))
	single := filepath.Join(dir, "single.jsonl")
	require.NoError(t, os.WriteFile(single, []byte(`{"text": "one"}`+"\n"+`{"text": "two"}`+"\n"), 0o644))
	for _, c := range []struct {
		name, file, kind string
		count            *int
		want             int
	}{
		{"trace", trace, "mooncake_trace", nil, 3},
		{"trace with a count", trace, "mooncake_trace", plan.Ptr(5), 5},
		{"single_turn", single, "single_turn", nil, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := profile(url)
			p.InputFile, p.CustomDatasetType, p.Concurrency, p.RequestCount = c.file, c.kind, plan.Ptr(2), c.count
			run, err := Run(context.Background(), Options{Profile: p})
			require.NoError(t, err)
			assert.Len(t, run.Records, c.want)
		})
	}
}
