package mlflow

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mlflow/mlflowfake"
	"github.com/aiperf-go/aiperf/internal/result"
)

// hangGuard bounds a wait the fix makes short (a hang guard, not a timing
// assertion): the unfixed code waits for the 120 s request timeout.
const hangGuard = 30 * time.Second

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// finishWithin runs Finish and fails the test when it does not return
// within hangGuard.
func finishWithin(t *testing.T, r *Run, ctx context.Context, run *result.Run) Outcome {
	t.Helper()
	got := make(chan Outcome, 1)
	go func() { got <- r.Finish(ctx, run) }()
	select {
	case out := <-got:
		return out
	case <-time.After(hangGuard):
		t.Fatal("Finish still waits")
		return Outcome{}
	}
}

func recordSome(r *Run, n int) {
	for i := range n {
		r.Record(&metrics.Record{Index: i, OutputTokens: 4, ResponseNs: metrics.StampsOf(50e6, 60e6, 70e6, 80e6)})
	}
}

// shortGrace makes liveGrace short for one test.
func shortGrace(t *testing.T) {
	old := liveGrace
	liveGrace = 50 * time.Millisecond
	t.Cleanup(func() { liveGrace = old })
}

// TestCtrlCCutsALiveSendLeftUnanswered: a tracking server gone quiet while
// the load goes holds a live batch for its whole request timeout (120 s);
// a Ctrl-C (the run's context cancelled) gives it liveGrace more, then cuts
// it, and the finish sends nothing more: the server did not answer. Whether
// the run's context reaches the live sends (StartLiveContext), the finish
// gets it already cancelled, or the Ctrl-C comes while the finish waits for
// the live goroutine.
func TestCtrlCCutsALiveSendLeftUnanswered(t *testing.T) {
	shortGrace(t)
	for _, mode := range []string{"live context", "finish context", "during the finish"} {
		t.Run(mode, func(t *testing.T) {
			fake := mlflowfake.Start(t)
			r, err := Start(context.Background(), Options{TrackingURI: fake.URL, ArtifactDir: artifactDir(t),
				BenchmarkID: "0123456789abcdef", Interval: 5 * time.Millisecond})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if mode == "live context" {
				r.StartLiveContext(ctx)
			} else {
				r.StartLive()
			}
			fake.Hang.Store(true)
			recordSome(r, 3)
			waitFor(t, "a live batch held by the server", func() bool { return fake.Hanging() == 1 })
			run := finishedRun()
			run.Status = result.StatusInterrupted
			var out Outcome
			if mode == "during the finish" {
				got := make(chan Outcome, 1)
				go func() { got <- r.Finish(ctx, run) }()
				waitFor(t, "the finish waiting", r.ending.Load)
				cancel()
				select {
				case out = <-got:
				case <-time.After(hangGuard):
					t.Fatal("Finish still waits after the Ctrl-C")
				}
			} else {
				cancel()
				if mode == "live context" {
					waitFor(t, "the live send cut", func() bool { return fake.Hanging() == 0 })
				}
				out = finishWithin(t, r, ctx, run)
			}
			require.Error(t, out.Err)
			assert.True(t, NoAnswer(out.Err), "%v", out.Err)
			assert.Contains(t, out.Err.Error(), "runs/log-batch: no answer")
			assert.Contains(t, out.Err.Error(), "after the run's interrupt")
			assert.EqualValues(t, 1, fake.Unanswered.Load(), "nothing sent after the unanswered live batch")
			assert.Zero(t, out.Metrics)
		})
	}
}

// TestServerGoneQuietAtTheEndCostsOneCall: the live batch the finish sends
// (the scalars still queued) or waits for (one in flight) is the end's
// first call: left unanswered, at its request timeout or with its
// connection closed, nothing more is sent, where the summary batch waited
// out a second timeout.
func TestServerGoneQuietAtTheEndCostsOneCall(t *testing.T) {
	t.Run("the finish's live batch times out", func(t *testing.T) {
		t.Setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "0.5")
		fake := mlflowfake.Start(t)
		var warned []string
		r, err := Start(context.Background(), Options{TrackingURI: fake.URL, ArtifactDir: artifactDir(t),
			BenchmarkID: "0123456789abcdef", Interval: time.Hour, Warn: func(s string) { warned = append(warned, s) }})
		require.NoError(t, err)
		r.StartLive()
		recordSome(r, 3)
		fake.Hang.Store(true)
		out := finishWithin(t, r, context.Background(), finishedRun())
		require.Error(t, out.Err)
		assert.True(t, NoAnswer(out.Err), "%v", out.Err)
		assert.Contains(t, out.Err.Error(), "runs/log-batch")
		assert.EqualValues(t, 1, fake.Unanswered.Load(), "one unanswered call, then nothing")
		assert.Empty(t, warned, "the finish reports it, once")
	})
	t.Run("a live batch in flight is left unanswered", func(t *testing.T) {
		fake := mlflowfake.Start(t)
		r, err := Start(context.Background(), Options{TrackingURI: fake.URL, ArtifactDir: artifactDir(t),
			BenchmarkID: "0123456789abcdef", Interval: 5 * time.Millisecond})
		require.NoError(t, err)
		r.StartLive()
		fake.Hang.Store(true)
		recordSome(r, 3)
		waitFor(t, "a live batch held by the server", func() bool { return fake.Hanging() == 1 })
		got := make(chan Outcome, 1)
		go func() { got <- r.Finish(context.Background(), finishedRun()) }()
		waitFor(t, "the finish waiting", r.ending.Load)
		fake.Quiet.Store(true) // from now every call is refused unanswered...
		fake.Hang.Store(false)
		fake.Release() // ...and the one held ends so
		var out Outcome
		select {
		case out = <-got:
		case <-time.After(hangGuard):
			t.Fatal("Finish still waits")
		}
		require.Error(t, out.Err)
		assert.True(t, NoAnswer(out.Err), "%v", out.Err)
		assert.EqualValues(t, 1, fake.Unanswered.Load(), "nothing sent after the unanswered live batch")
	})
}

// TestValuesOverMLflowsLimitsAreClipped: a 7000-character model name (a
// param), a 9000-character tag and run name, over MLflow's limits (6000,
// 8000, 250), which the fake enforces as MLflow does by refusing the whole
// request, are sent clipped and marked so, with one bounded warning each,
// and lose nothing else: the run, its metrics, other params and tags and
// its status all arrive.
func TestValuesOverMLflowsLimitsAreClipped(t *testing.T) {
	fake := mlflowfake.Start(t)
	var mu sync.Mutex
	var warned []string
	warn := func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() }
	longName, longTag := strings.Repeat("n", 9000), strings.Repeat("t", 9000)
	r, err := Start(context.Background(), Options{TrackingURI: fake.URL, ArtifactDir: artifactDir(t),
		BenchmarkID: "0123456789abcdef", RunName: longName, Tags: map[string]string{"note": longTag}, Warn: warn})
	require.NoError(t, err, "the run is created")
	run := finishedRun()
	model := strings.Repeat("é", 7000) // characters, not bytes, as MLflow counts
	run.Config.Model = []string{model}
	run.CLICommand = "aiperf profile -m " + model
	out := r.Finish(context.Background(), run)
	require.NoError(t, out.Err)

	got := fake.Runs()[0]
	assert.Equal(t, "FINISHED", got.Status)
	assert.Equal(t, maxRunName, utf8.RuneCountInString(got.Name))
	assert.True(t, strings.HasSuffix(got.Name, clipMark))
	assert.Equal(t, got.Name, got.Tags["mlflow.runName"])
	for key, want := range map[string]int{"endpoint.models": maxParamValue, "aiperf.cli_command": maxParamValue} {
		v := got.Params[key]
		assert.Equal(t, want, utf8.RuneCountInString(v), key)
		assert.True(t, strings.HasSuffix(v, clipMark), key)
	}
	assert.True(t, strings.HasPrefix(got.Params["endpoint.models"], strings.Repeat("é", 100)))
	assert.Equal(t, "chat", got.Params["endpoint.type"])
	assert.Equal(t, maxTagValue, utf8.RuneCountInString(got.Tags["note"]))
	assert.True(t, strings.HasSuffix(got.Tags["note"], clipMark))
	assert.Equal(t, []float64{12}, got.Metrics["time_to_first_token"])
	assert.Positive(t, out.Metrics)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, warned, 3, "the run name, the tag at the creation, the params at the finish")
	assert.Contains(t, warned[0], "run name")
	assert.Contains(t, warned[1], `tag "note" (9000 characters, limit 8000)`)
	assert.NotContains(t, warned[2], "note", "warned of once")
	assert.Contains(t, warned[2], `param "aiperf.cli_command" (7018 characters, limit 6000)`)
	assert.Contains(t, warned[2], `param "endpoint.models" (7000 characters, limit 6000)`)
	for _, w := range warned {
		assert.Less(t, utf8.RuneCountInString(w), 600, "a bounded warning: %.200s", w)
	}
}

// TestRefusedParamsLoseNoMetrics: the server refuses the params (one was
// logged before with another value: params are immutable); the summary
// metrics and the tags, in batches of their own, still arrive, the status
// is set, and the outcome names the refusal.
func TestRefusedParamsLoseNoMetrics(t *testing.T) {
	fake := mlflowfake.Start(t)
	r, err := Start(context.Background(), Options{TrackingURI: fake.URL, ArtifactDir: artifactDir(t), BenchmarkID: "0123456789abcdef"})
	require.NoError(t, err)
	require.NoError(t, r.c.LogBatch(context.Background(), r.Info.RunID, nil, []KV{{"endpoint.type", "completions"}}, nil))
	out := r.Finish(context.Background(), finishedRun())
	require.Error(t, out.Err)
	assert.Contains(t, out.Err.Error(), "Changing param values is not allowed")
	got := fake.Runs()[0]
	assert.Equal(t, []float64{12}, got.Metrics["time_to_first_token"])
	assert.Positive(t, out.Metrics)
	assert.Equal(t, "0123456789abcdef", got.Tags["benchmark_id"])
	assert.Equal(t, "FINISHED", got.Status)
	assert.NotEmpty(t, out.Uploaded)
}

// TestAServersEchoIsBounded: a server refusing a long value quotes it
// whole (as MLflow does); the error keeps its start only.
func TestAServersEchoIsBounded(t *testing.T) {
	fake := mlflowfake.Start(t)
	c, err := NewClient(fake.URL, nil)
	require.NoError(t, err)
	ctx := context.Background()
	exp, err := c.ExperimentID(ctx, "x")
	require.NoError(t, err)
	info, err := c.CreateRun(ctx, exp, "r", nil, time.Now())
	require.NoError(t, err)
	err = c.LogBatch(ctx, info.RunID, nil, []KV{{"p", strings.Repeat("v", 7000)}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400 INVALID_PARAMETER_VALUE: Param value 'vvv")
	assert.Less(t, len(err.Error()), 700)
}

// TestAfterACtrlCTheStatusGetsFiveSeconds: a tracking server that never
// answers runs/update held an interrupted run's end for the whole request
// timeout (120 s by default; 600 s here) when the Ctrl-C came before the
// finish (its 30 s bound was dropped for the status) or while the status
// was on its way. After a Ctrl-C the status gets interruptedUpdate, then is
// cut: the server did not answer; the summary and files went before it.
func TestAfterACtrlCTheStatusGetsFiveSeconds(t *testing.T) {
	t.Setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "600")
	for _, mode := range []string{"before the finish", "during the status update"} {
		t.Run(mode, func(t *testing.T) {
			fake := mlflowfake.Start(t)
			fake.HangPath.Store("/runs/update")
			r, err := Start(context.Background(), Options{TrackingURI: fake.URL, ArtifactDir: artifactDir(t),
				BenchmarkID: "0123456789abcdef"})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			run := finishedRun()
			run.Status = result.StatusInterrupted
			cut := time.Now()
			if mode == "before the finish" {
				cancel()
			}
			got := make(chan Outcome, 1)
			go func() { got <- r.Finish(ctx, run) }()
			if mode != "before the finish" {
				waitFor(t, "the status update held by the server", func() bool { return fake.Hanging() == 1 })
				cut = time.Now()
				cancel()
			}
			var out Outcome
			select {
			case out = <-got:
			case <-time.After(hangGuard):
				t.Fatal("Finish still waits after the Ctrl-C")
			}
			assert.GreaterOrEqual(t, time.Since(cut), interruptedUpdate, "the status had its grace")
			require.Error(t, out.Err)
			assert.True(t, NoAnswer(out.Err), "%v", out.Err)
			assert.Contains(t, out.Err.Error(), "runs/update (KILLED): no answer 5s after the run's interrupt")
			assert.EqualValues(t, 1, fake.Unanswered.Load(), "the status update only went unanswered")
			assert.Positive(t, out.Metrics, "the summary went before")
			assert.NotEmpty(t, out.Uploaded, "the files went before")
		})
	}
}
