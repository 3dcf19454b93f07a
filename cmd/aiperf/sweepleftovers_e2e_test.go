package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// gateFirstStart holds the first profiler start at the mock until release
// is closed, whether or not its client is still there, and then runs it to
// its end (as a server does with a call whose client left); held receives
// once it arrived.
func gateFirstStart(held chan<- struct{}, release <-chan struct{}) func(http.Handler) http.Handler {
	var once sync.Once
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			first := false
			if r.URL.Path == "/start_profile" {
				once.Do(func() { first = true })
			}
			if first {
				held <- struct{}{}
				<-release
				r = r.WithContext(context.WithoutCancel(r.Context()))
			}
			next.ServeHTTP(w, r)
		})
	}
}

// adminKinds are the admin events of m's control log, in order.
func adminKinds(m *mockServer) []string {
	var out []string
	for _, k := range m.kinds() {
		if !strings.HasPrefix(k, "request_") {
			out = append(out, k)
		}
	}
	return out
}

// storedWarnings reads the audit warnings of run id from the store in dir.
func storedWarnings(t *testing.T, dir string, id int64) []string {
	t.Helper()
	run, err := openStore(t, dir).GetRun(context.Background(), id, false)
	require.NoError(t, err)
	return run.Audit.Warnings
}

// TestSweepSecondInterruptDuringProfilerStart: a second Ctrl-C while a
// trial's profiler start is on its way exits the sweep at once, the trial
// with it, before the start was answered: the server's profiler then runs
// with no one to stop it. The first Ctrl-C said so on the console; the
// trial's profiler mark stays, and the --resume that runs the trial again
// stops that profiler first (once the start can no longer be on its way),
// recorded on the new run, before its own start and stop.
func TestSweepSecondInterruptDuringProfilerStart(t *testing.T) {
	subprocesses(t)
	held, release := make(chan struct{}, 1), make(chan struct{})
	m := startMockBehind(t, mock.Config{TTFT: 5}, gateFirstStart(held, release))
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	dir := t.TempDir()
	script := writeFile(t, dir, "startint.star", smallBase+`
sweep(name = "startint", base = base.replace(server_profiler = True, server_profiler_timeout_seconds = 10))
`)
	args := []string{"sweep", script, "--set", "url=" + m.URL, "--set", "tok=" + tinyTokenizer(t)}
	trialDir := filepath.Join(dir, "artifacts", "startint", "base", "trial_0001")
	cmd, _, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), args...)
	select {
	case <-held:
	case <-time.After(hangGuard):
		t.Fatalf("no profiler start arrived; stderr:\n%s", stderr)
	}
	child := trialPID(t, trialDir)
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	awaitOutput(t, stderr, "stopping cleanly")
	awaitOutput(t, stderr, "base trial 1: its server profiler is running or being started")
	time.Sleep(sameSignal) // not the first one delivered twice
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.Equal(t, ExitInterrupted, exitCode(t, cmd, hangGuard), stderr.String())
	out := stderr.String()
	assert.Contains(t, out, "A second Ctrl-C exits at once and may leave it running: `aiperf sweep --resume` (or the next run of this trial) stops it first")
	require.Eventually(t, func() bool { return processGone(child) }, hangGuard, 10*time.Millisecond)
	assert.FileExists(t, filepath.Join(trialDir, runner.ProfilerMarkFile), "the mark outlives the trial")

	close(release) // the start the dead trial sent runs on the server: its profiler runs
	require.Eventually(t, func() bool { return m.control().ProfilerStarts == 1 }, hangGuard, 5*time.Millisecond)
	assert.Equal(t, 0, m.control().ProfilerStops)
	awaitOrphansGone(t, dir)

	again := cli(t, dir, append(args, "--resume")...)
	require.Equal(t, ExitOK, again.code, "stdout:\n%s\nstderr:\n%s", again.stdout, again.stderr)
	assert.Contains(t, again.stderr, "base trial 1: an earlier run of this trial died with its server profiler possibly running: stopping it first")
	assert.Equal(t, []string{"start_profile", "stop_profile", "start_profile", "stop_profile"}, adminKinds(m),
		"the orphaned start is stopped before the trial's own bracket")
	assert.NoFileExists(t, filepath.Join(trialDir, runner.ProfilerMarkFile))

	runs, err := openStore(t, dir).ListRuns(context.Background(), store.RunFilter{Sweep: "startint"})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, result.StatusComplete, runs[0].Status)
	stored := readStoredRun(t, dir, int(runs[0].ID))
	require.Len(t, stored.ControlHooks, 3)
	first := stored.ControlHooks[0]
	assert.Equal(t, hooks.HookProfilerStop, first.Hook)
	assert.True(t, first.OK)
	assert.Contains(t, first.Warning, "stopped by the sweep runner before the trial ran again")
	assert.Equal(t, []string{hooks.HookProfilerStart, hooks.HookProfilerStop},
		[]string{stored.ControlHooks[1].Hook, stored.ControlHooks[2].Hook})
	assert.Contains(t, strings.Join(storedWarnings(t, dir, runs[0].ID), "\n"),
		"server profiler stopped by the sweep runner before the trial ran again")
}

// TestSweepLateResetHoldsTheNextTrial: a trial's reset that got no answer
// within its timeout still runs on the server (the mock's admin latency, as
// vLLM's handler); the next trial on that server waits for it before it
// loads the server, so that the reset lands before its first request, and
// is stored with a warning that the reset may have run during it.
func TestSweepLateResetHoldsTheNextTrial(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{TTFT: 5, AdminLatencyMS: 3000})
	dir := t.TempDir()
	script := writeFile(t, dir, "late.star", smallBase+`
sweep(name = "late", base = base, scenarios = [
    {"name": "slow", "reset_kv_cache": True, "reset_kv_cache_timeout_seconds": 1, "reset_kv_cache_max_retry_seconds": 0},
    {"name": "next", "request_count": 8},
])
`)
	r := cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--set", "tok="+tinyTokenizer(t))
	require.Equal(t, ExitSomeFailed, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "no answer within 1s")
	// The wait left is rounded to seconds, and the trial's end took some.
	assert.Regexp(t, `next trial 1: waiting \d+s first: the previous trial's reset of `+regexp.QuoteMeta(m.URL)+` \(slow trial 1\) got no answer within 1s`, r.stderr)

	kinds := m.kinds()
	require.Contains(t, kinds, "reset", "the late reset ran on the server")
	first := slicesIndex(kinds, "request_start")
	require.GreaterOrEqual(t, first, 0)
	assert.Less(t, slicesIndex(kinds, "reset"), first, "the late reset landed before the next trial's load: %v", kinds)

	runs, err := openStore(t, dir).ListRuns(context.Background(), store.RunFilter{Sweep: "late"})
	require.NoError(t, err)
	require.Len(t, runs, 2)
	for _, run := range runs {
		if run.CellLabel == "next" {
			assert.Equal(t, result.StatusComplete, run.Status)
			assert.Contains(t, storedWarnings(t, dir, run.ID),
				"the previous trial's reset of "+m.URL+" (slow trial 1) got no answer within 1s and may have run during this trial")
		} else {
			assert.Equal(t, result.StatusFailed, run.Status)
			assert.Empty(t, storedWarnings(t, dir, run.ID))
		}
	}
}

func slicesIndex(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// TestParallelLanesByAddress: with --parallel, cells whose URLs reach one
// server by different spellings (127.0.0.1, 0.0.0.0, and the machine's
// name when it resolves to loopback) share a lane: their trials run one at
// a time, and a note says why.
func TestParallelLanesByAddress(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	port := m.URL[strings.LastIndex(m.URL, ":")+1:]
	urls := []string{"http://127.0.0.1:" + port, "http://0.0.0.0:" + port}
	if host, err := os.Hostname(); err == nil && resolvesToLoopback(host) {
		urls = append(urls, "http://"+host+":"+port)
	} else {
		t.Logf("the machine's name %q does not resolve to loopback: only 127.0.0.1 and 0.0.0.0 are tried", host)
	}
	dir := t.TempDir()
	var cells []string
	for i := range urls {
		cells = append(cells, `{"name": "u`+string(rune('0'+i))+`", "url": vars["u`+string(rune('0'+i))+`"]}`)
	}
	script := writeFile(t, dir, "spell.star", smallBase+`
sweep(name = "spell", base = base.replace(reset_kv_cache = True, server_profiler = True, concurrency = 2),
      scenarios = [`+strings.Join(cells, ", ")+`])
`)
	args := []string{"sweep", script, "--set", "url=" + m.URL, "--set", "tok=" + tinyTokenizer(t), "--parallel", "3"}
	for i, u := range urls {
		args = append(args, "--set", "u"+string(rune('0'+i))+"="+u)
	}
	r := cli(t, dir, args...)
	require.Equal(t, ExitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "reach one server: their cells share a lane, one trial at a time")
	assert.Contains(t, r.stderr, `every cell loads one server, so its trials run one at a time`)
	assertOneTrialAtATime(t, m, len(urls))
}

// resolvesToLoopback reports whether host resolves to loopback addresses
// only (within a second).
func resolvesToLoopback(host string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return false
		}
	}
	return true
}
