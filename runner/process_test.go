package runner_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// childMode makes the test binary play a trial child (see TestMain): the
// Local executor runs os.Args[0], which is this binary.
const childMode = "RUNNER_TEST_CHILD"

// parentMode makes the test binary play a sweep parent that launches one
// "stop" child into the directory named by the variable and waits forever.
const parentMode = "RUNNER_TEST_PARENT"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childMode); mode != "" {
		os.Exit(fakeChild(mode, os.Args[1:]))
	}
	if dir := os.Getenv(parentMode); dir != "" {
		os.Setenv(childMode, cmp.Or(os.Getenv(parentChildMode), "stop"))
		os.Unsetenv(parentMode)
		ctx, cancel := context.WithCancel(context.Background())
		if os.Getenv(parentInterrupts) != "" {
			go cancelOnceStarted(ctx, cancel, dir)
		}
		_, _ = runner.Local{Binary: os.Args[0]}.Launch(ctx, runner.Spec{Profile: plan.NewProfile()}, dir)
		select {} // the test kills us
	}
	os.Exit(m.Run())
}

// fakeChild behaves like `aiperf profile --spec-file S --artifact-dir D
// --result-file R ...` in one of these modes:
//
//	ok      writes a complete result and exits 0
//	crash   prints a panic line and exits 2 without a result
//	stop    on SIGINT, writes an interrupted result and exits 130
//	hang    ignores SIGINT and never exits
//	watch   see watchParent
//	dies    leaves a profiler mark, prints a panic line quoting the API
//	        key and exits 2 without a result (as if killed mid-profile)
//
// Every mode first checks that its spec file is gone once read, then writes
// "started" into the artifact dir.
func fakeChild(mode string, args []string) int {
	arg := func(name string) string {
		i := slices.Index(args, name)
		if i < 0 || i+1 == len(args) {
			panic("fake child: missing " + name)
		}
		return args[i+1]
	}
	spec, err := runner.TakeSpec(arg("--spec-file"))
	if err != nil {
		panic(err)
	}
	if _, err := os.Stat(arg("--spec-file")); !errors.Is(err, os.ErrNotExist) {
		panic("fake child: the spec outlived its reading")
	}
	writeRun := func(status string) { // what every run carries: a model, a URL, a summary when complete
		run := &result.Run{Config: spec.Profile.Redacted(), Info: spec.Info, Status: status}
		if len(run.Config.Model) == 0 {
			run.Config.Model = []string{"m"}
		}
		if status == result.StatusComplete {
			run.Profiling.Metrics = []metrics.Metric{{Tag: "request_count", Value: 1}}
		}
		b, _ := json.Marshal(run)
		if err := os.WriteFile(arg("--result-file"), b, 0o644); err != nil {
			panic(err)
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	if err := os.WriteFile(filepath.Join(arg("--artifact-dir"), "started"), nil, 0o644); err != nil {
		panic(err)
	}
	switch mode {
	case "ok":
		writeRun(result.StatusComplete)
		return 0
	case "crash":
		fmt.Fprintln(os.Stderr, "starting\npanic: boom")
		return 2
	case "hollow": // exits 0 with a result that is no run's
		if err := os.WriteFile(arg("--result-file"), []byte(`{"status":"complete"}`), 0o644); err != nil {
			panic(err)
		}
		return 0
	case "stop":
		<-sigs
		writeRun(result.StatusInterrupted)
		return 130
	case "hang":
		for range sigs { // swallow every SIGINT
		}
	case "watch":
		return watchParent(arg("--artifact-dir"), sigs, writeRun)
	case "dies":
		h := spec.Profile.ProfilerHook()
		b, _ := json.Marshal(hooks.Mark{PID: os.Getpid(), Phase: "profiling", Origins: spec.Profile.Origins(),
			StopPath: h.StopPath, TimeoutSeconds: h.Timeout.Seconds()})
		if err := os.WriteFile(spec.ProfilerMark, b, 0o644); err != nil {
			panic(err)
		}
		fmt.Fprintln(os.Stderr, "panic: request with key "+spec.Profile.APIKey+" failed")
		return 2
	}
	return 1
}

// launchChild runs one trial through runner.Local with the child in mode.
// cancelOnStart cancels the trial's context once the child is running.
func launchChild(t *testing.T, mode string, cancelOnStart bool) (*result.Run, error, string) {
	t.Helper()
	t.Setenv(childMode, mode)
	t.Setenv("GORACE", "atexit_sleep_ms=0") // a -race child would pause 1 s at exit
	dir := filepath.Join(t.TempDir(), "trial_0001")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if cancelOnStart {
		go cancelOnceStarted(ctx, cancel, dir)
	}
	p := plan.NewProfile()
	p.APIKey = "sk-process-secret"
	spec := runner.Spec{Profile: p, Info: result.TrialInfo{Sweep: "s", CellID: "c", Trial: 1}}
	type ret struct {
		run *result.Run
		err error
	}
	done := make(chan ret, 1)
	// Only the child that ignores SIGINT gets a short grace period: one
	// that stops cleanly must never be killed for being slow to.
	local := runner.Local{Binary: os.Args[0]} // the default grace: 1 min
	if mode == "hang" {
		local.Grace = 200 * time.Millisecond
	}
	go func() {
		run, err := local.Launch(ctx, spec, dir)
		done <- ret{run, err}
	}()
	select {
	case r := <-done:
		return r.run, r.err, dir
	case <-time.After(3 * time.Minute): // a bound against a hung test (above the default grace), not a timing assertion
		t.Fatal("Launch did not return: the child was not killed after its grace period")
		return nil, nil, dir
	}
}

func TestProcessLaunch(t *testing.T) {
	t.Run("complete", func(t *testing.T) {
		run, err, dir := launchChild(t, "ok", false)
		require.NoError(t, err)
		require.NotNil(t, run)
		assert.Equal(t, result.StatusComplete, run.Status)
		assert.Equal(t, 1, run.Info.Trial)
		assert.NoFileExists(t, filepath.Join(dir, runner.SpecFile), "the spec, which holds secrets, is removed")
	})
	t.Run("crash without a result", func(t *testing.T) {
		run, err, dir := launchChild(t, "crash", false)
		assert.Nil(t, run)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "exit status 2")
		assert.Contains(t, err.Error(), ": panic: boom", "the last line of the child's log explains the crash")
		assert.NoFileExists(t, filepath.Join(dir, runner.SpecFile))
	})
	t.Run("a result that is no run's is refused, saying why", func(t *testing.T) {
		run, err, _ := launchChild(t, "hollow", false)
		assert.Nil(t, run)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is not a run's result: it names no model")
		assert.NotContains(t, err.Error(), "without writing a result")
	})
	t.Run("interrupted child stops cleanly", func(t *testing.T) {
		run, err, _ := launchChild(t, "stop", true)
		require.NoError(t, err, "the child's own result is returned")
		require.NotNil(t, run)
		assert.Equal(t, result.StatusInterrupted, run.Status)
	})
	t.Run("a child that ignores SIGINT is killed after the grace period", func(t *testing.T) {
		run, err, dir := launchChild(t, "hang", true)
		assert.Nil(t, run)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "killed")
		assert.NoFileExists(t, filepath.Join(dir, runner.SpecFile))
	})
}

// TestProcessStopsADeadChildsProfiler: a child that dies after starting its
// server profiler leaves its mark; the parent sends the stop on its behalf,
// with the trial's credentials, and returns a failed run that records it.
// What the dying child printed is redacted in its log and in the error.
func TestProcessStopsADeadChildsProfiler(t *testing.T) {
	t.Setenv(childMode, "dies")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.URL.Path+" "+r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	const secret = "sk-process-secret"
	p := plan.NewProfile()
	p.APIKey = secret
	p.URL = []string{srv.URL}
	p.ServerProfiler = true
	dir := filepath.Join(t.TempDir(), "trial_0001")
	spec := runner.Spec{Profile: p, Info: result.TrialInfo{Sweep: "s", CellID: "c", Trial: 1}}

	run, err := runner.Local{Binary: os.Args[0]}.Launch(context.Background(), spec, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exit status 2: panic: request with key <redacted> failed")
	require.NotNil(t, run, "a failed run records the stop")
	assert.Equal(t, result.StatusFailed, run.Status)
	assert.Equal(t, err.Error(), run.Error)
	require.Len(t, run.ControlHooks, 1)
	call := run.ControlHooks[0]
	assert.Equal(t, hooks.HookProfilerStop, call.Hook)
	assert.True(t, call.OK)
	assert.Equal(t, "stopped by the sweep runner after the trial process died", call.Warning)
	assert.Contains(t, run.Audit.Warnings, "server profiler stopped by the sweep runner after the trial process died")
	assert.Equal(t, []string{"/stop_profile Bearer " + secret}, got, "the stop carries the trial's credentials")
	assert.NoFileExists(t, filepath.Join(dir, runner.ProfilerMarkFile))
	assert.NoFileExists(t, filepath.Join(dir, runner.SpecFile))

	log, rerr := os.ReadFile(filepath.Join(dir, runner.LogFile))
	require.NoError(t, rerr)
	assert.Contains(t, string(log), "panic: request with key <redacted> failed")
	assert.False(t, strings.Contains(string(log), secret))
	b, _ := json.Marshal(run)
	assert.NotContains(t, string(b), secret)
}
