package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// lanesScript sweeps two servers × two concurrencies, two trials each:
// eight trial subprocesses, two server lanes of four.
const lanesScript = smallBase + `
sweep(name = "lanes", base = base.replace(reset_kv_cache = True, server_profiler = True),
      matrix = {"url": [[vars["url"]], [vars["url2"]]], "concurrency": [1, 2]}, trials = 2)
`

// laneMocks starts the two servers of lanesScript behind g and returns
// the sweep's arguments.
func laneMocks(t *testing.T, dir string, g *rendezvous) ([]*mockServer, []string) {
	t.Helper()
	ms := []*mockServer{startMockBehind(t, mock.Config{Fast: true}, g.at(0)), startMockBehind(t, mock.Config{Fast: true}, g.at(1))}
	script := writeFile(t, dir, "lanes.star", lanesScript)
	return ms, []string{"sweep", script, "--set", "url=" + ms[0].URL, "--set", "url2=" + ms[1].URL, "--set", "tok=" + tinyTokenizer(t)}
}

// rendezvous holds the inference requests of n mocks, from the after+1-th
// each receives, until every mock holds one: then a trial of each server is
// in its profiling phase at the same moment, whatever the timing of the
// trial processes (with one mock: a trial is provably mid-load). all is
// closed then. Without keep, the held requests go on at once. With keep,
// every request is held until release is closed, and the held ones are
// never served (their run was interrupted while they waited: they end
// when their client gives up, or unanswered at release); requests that
// arrive after release go on.
type rendezvous struct {
	after int
	keep  bool

	mu      sync.Mutex
	seen    []int
	holding []bool
	all     chan struct{}
	release chan struct{}
}

func newRendezvous(n, after int, keep bool) *rendezvous {
	return &rendezvous{after: after, keep: keep, seen: make([]int, n), holding: make([]bool, n),
		all: make(chan struct{}), release: make(chan struct{})}
}

func (g *rendezvous) at(i int) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/completions") && g.hold(i) {
				select {
				case <-g.release:
					if g.keep {
						return // held for a run that is over
					}
				case <-r.Context().Done():
					return // the trial was interrupted while held
				case <-time.After(2 * time.Minute): // the other side never came: fail, never hang
					http.Error(w, "rendezvous: the other lane's request never arrived", http.StatusServiceUnavailable)
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}
}

// hold counts an inference request of mock i and says whether to hold it.
func (g *rendezvous) hold(i int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen[i]++
	if g.seen[i] <= g.after {
		return false
	}
	select {
	case <-g.all:
		select {
		case <-g.release:
			return false
		default:
			return g.keep
		}
	default:
	}
	if g.holding[i] = true; !slices.Contains(g.holding, false) {
		close(g.all)
		if !g.keep {
			close(g.release)
		}
	}
	return true
}

// assertOneTrialAtATime checks a server's control log: every trial's reset,
// profiler start, four requests and profiler stop back to back, never
// interleaved with another trial's, and at most 2 requests in flight (the
// largest concurrency of one cell).
func assertOneTrialAtATime(t *testing.T, m *mockServer, trials int) {
	t.Helper()
	segs := trialSegments(m.kinds())
	require.Len(t, segs, trials)
	for i, seg := range segs {
		require.GreaterOrEqual(t, len(seg), 3, "trial %d: %v", i+1, seg)
		assert.Equal(t, []string{"reset", "start_profile"}, seg[:2], "trial %d", i+1)
		assert.Equal(t, "stop_profile", seg[len(seg)-1], "trial %d: %v", i+1, seg)
		assert.Equal(t, 1, count(seg, "start_profile"), "trial %d: one bracket, no other trial's inside", i+1)
		assert.Equal(t, 4, count(seg, "request_start"), "trial %d", i+1)
		assert.Equal(t, 4, count(seg, "request_end"), "trial %d", i+1)
	}
	inFlight, peak := 0, 0
	for _, e := range m.control().Events {
		switch e.Kind {
		case mock.EventRequestStart:
			inFlight++
		case mock.EventRequestEnd:
			inFlight--
		}
		peak = max(peak, inFlight)
	}
	assert.LessOrEqual(t, peak, 2, "no two trials' load at once")
}

// storedOnce checks that the sweep's runs are its eight trials, each once,
// complete, and returns them.
func storedOnce(t *testing.T, dir string) []store.RunRow {
	t.Helper()
	runs, err := openStore(t, dir).ListRuns(context.Background(), store.RunFilter{Sweep: "lanes"})
	require.NoError(t, err)
	require.Len(t, runs, 8)
	keys := storedKeys(runs)
	assert.Len(t, slices.Compact(slices.Clone(keys)), 8, "every trial stored once")
	for _, r := range runs {
		assert.Equal(t, result.StatusComplete, r.Status, "run %d: %s", r.ID, r.Error)
		assert.Equal(t, 4, r.RecordCount)
	}
	return runs
}

func TestParallelSweepRunsServersSideBySide(t *testing.T) {
	subprocesses(t)
	dir := t.TempDir()
	// Each server's first request waits for the other's: their first trials overlap.
	g := newRendezvous(2, 0, false)
	ms, args := laneMocks(t, dir, g)

	pl := cli(t, dir, append([]string{"plan", "--parallel", "2"}, args[1:]...)...)
	require.Equal(t, ExitOK, pl.code, pl.stderr)
	assert.Contains(t, pl.stdout, "schedule: up to 2 trials at once (--parallel 2) on 2 server lanes")
	assert.Contains(t, pl.stdout, "lane 1 http://localhost:"+strings.TrimPrefix(ms[0].URL, "http://127.0.0.1:")+": 2 cells")

	pj := cli(t, dir, append([]string{"plan", "--parallel", "2", "--format", "json"}, args[1:]...)...)
	require.Equal(t, ExitOK, pj.code, pj.stderr)
	var lanes struct {
		Lanes map[string][]struct {
			Servers []string `json:"servers"`
			Cells   []string `json:"cells"`
		} `json:"lanes"`
	}
	require.NoError(t, json.Unmarshal([]byte(pj.stdout), &lanes))
	require.Len(t, lanes.Lanes["lanes"], 2)
	for _, l := range lanes.Lanes["lanes"] {
		assert.Len(t, l.Servers, 1)
		assert.Len(t, l.Cells, 2, "each server's two concurrencies share its lane")
	}
	assert.Empty(t, ms[0].control().Events, "plan sent nothing")

	sw := cli(t, dir, append(args, "--parallel", "2")...)
	require.Equal(t, ExitOK, sw.code, "stdout:\n%s\nstderr:\n%s", sw.stdout, sw.stderr)
	assert.Contains(t, sw.stderr, "schedule: up to 2 trials at once (--parallel 2) on 2 server lanes")
	for i := 1; i <= 8; i++ {
		assert.Equal(t, 2, strings.Count(sw.stderr, fmt.Sprintf("[%d/8] lanes ", i)), "trial %d: running, then its end", i)
	}
	for _, m := range ms {
		assertOneTrialAtATime(t, m, 4)
		c := m.control()
		assert.Equal(t, 4, c.ProfilerStarts)
		assert.Equal(t, 4, c.ProfilerStops)
	}

	select {
	case <-g.all:
	default:
		t.Fatal("the two servers never had a request waiting at the same time")
	}
	// The stored trials of the two servers overlap in time.
	runs := storedOnce(t, dir)
	overlapped := false
	for _, a := range runs {
		for _, b := range runs {
			if a.URL != b.URL && a.StartedAt.Before(b.EndedAt) && b.StartedAt.Before(a.EndedAt) {
				overlapped = true
			}
		}
	}
	assert.True(t, overlapped, "trials of the two servers ran at the same time")
	s, err := openStore(t, dir).SweepRuns(context.Background(), "lanes", nil)
	require.NoError(t, err)
	for _, c := range s.Cells {
		agg := readJSON(t, filepath.Join(dir, "artifacts", "lanes", c.Label, runner.AggregateFile))
		assert.Equal(t, 2.0, agg["metadata"].(map[string]any)["num_successful_runs"], c.Label)
	}
}

func TestParallelOnOneServerRunsSerially(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	script := writeFile(t, dir, "one.star", smallBase+`
sweep(name = "one", base = base.replace(reset_kv_cache = True), matrix = {"concurrency": [1, 2]})
`)
	r := cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--set", "tok="+tinyTokenizer(t), "--parallel", "4", "--ui", "none")
	require.Equal(t, ExitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, `note: --parallel 4: every cell of sweep "one" loads http://localhost:`)
	assert.Contains(t, r.stderr, "so its trials run one at a time")
	assert.Len(t, trialSegments(m.kinds()), 2)

	r = cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--set", "tok=x", "--parallel", "0")
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, "--parallel must be at least 1, got 0")
}

// cancelWhenHeld cancels ctx (Ctrl-C) once every server of g holds a
// request, calling before first.
func cancelWhenHeld(ctx context.Context, cancel context.CancelFunc, g *rendezvous, before func()) {
	go func() {
		select {
		case <-g.all:
			if before != nil {
				before()
			}
			cancel()
		case <-ctx.Done():
		}
	}()
}

// assertInterruptedAfterFirstTrials checks a sweep interrupted while each
// lane ran its second trial.
func assertInterruptedAfterFirstTrials(t *testing.T, r invocation, ms []*mockServer, dir string) {
	t.Helper()
	require.Equal(t, ExitInterrupted, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "interrupted after 2 of 8 trials")
	assert.Equal(t, 2, strings.Count(r.stderr, "interrupted (not stored)"), "both running trials stopped")
	for _, m := range ms {
		assert.Eventually(t, func() bool { return m.control().ProfilerStops == 2 }, hangGuard, 10*time.Millisecond,
			"the interrupted trial stopped its profiler")
	}
	runs, err := openStore(t, dir).ListRuns(context.Background(), store.RunFilter{Sweep: "lanes"})
	require.NoError(t, err)
	assert.Len(t, runs, 2, "the first trial of each lane stored, the interrupted ones not")
}

func TestParallelSweepInterruptedLocallyResumesOnKubernetes(t *testing.T) {
	subprocesses(t)
	dir := t.TempDir()
	g := newRendezvous(2, 4, true)
	ms, args := laneMocks(t, dir, g)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelWhenHeld(ctx, cancel, g, nil)
	first := cliCtx(ctx, t, dir, append(args, "--parallel", "2")...)
	assertInterruptedAfterFirstTrials(t, first, ms, dir)
	close(g.release)

	cs := fakeCluster(t)
	second := cli(t, dir, append(args, "--parallel", "2", "--resume",
		"--executor", "kubernetes", "--namespace", "bench", "--image", "ghcr.io/acme/aiperf:1.2")...)
	require.Equal(t, ExitOK, second.code, "stdout:\n%s\nstderr:\n%s", second.stdout, second.stderr)
	assert.Equal(t, 2, strings.Count(second.stderr, "already stored, skipped"), "the local trials are not run again")
	assert.Equal(t, 6, countVerb(cs, "create"), "a Job for each trial left")
	storedOnce(t, dir)
	for _, m := range ms {
		assert.Equal(t, 5, m.control().ResetCount, "on each server: the stored trial, the interrupted one, then the three left")
	}
	s, err := openStore(t, dir).SweepRuns(context.Background(), "lanes", nil)
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, s.Sweep.Status)
	for _, c := range s.Cells {
		agg := readJSON(t, filepath.Join(dir, "artifacts", "lanes", c.Label, runner.AggregateFile))
		assert.Equal(t, 2.0, agg["metadata"].(map[string]any)["num_successful_runs"], "%s: a local and a kubernetes trial", c.Label)
		assertKubeExports(t, filepath.Join(dir, "artifacts", "lanes", c.Label, "trial_0002"), 4)
	}
}

func TestParallelKubernetesSweepCancelDeletesJobsAndResumesLocally(t *testing.T) {
	cs := fakeCluster(t)
	dir := t.TempDir()
	g := newRendezvous(2, 4, true)
	ms, args := laneMocks(t, dir, g)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	running := -1
	cancelWhenHeld(ctx, cancel, g, func() {
		jobs, err := cs.BatchV1().Jobs("bench").List(context.Background(), metav1.ListOptions{})
		if err == nil {
			running = len(jobs.Items)
		}
	})
	first := cliCtx(ctx, t, dir, append(args, "--parallel", "2",
		"--executor", "kubernetes", "--namespace", "bench", "--image", "ghcr.io/acme/aiperf:1.2")...)
	assertInterruptedAfterFirstTrials(t, first, ms, dir)
	close(g.release)
	assert.Equal(t, 2, running, "the two servers' Jobs ran side by side")
	assert.Equal(t, 4, countVerb(cs, "create"))
	assert.Equal(t, 4, countVerb(cs, "delete"), "every Job deleted, the two cancelled ones included")
	left, err := cs.BatchV1().Jobs("bench").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, left.Items)

	second := cli(t, dir, append(args, "--parallel", "2", "--resume")...)
	require.Equal(t, ExitOK, second.code, "stdout:\n%s\nstderr:\n%s", second.stdout, second.stderr)
	assert.Equal(t, 2, strings.Count(second.stderr, "already stored, skipped"), "the kubernetes trials are not run again")
	storedOnce(t, dir)
	s, err := openStore(t, dir).SweepRuns(context.Background(), "lanes", nil)
	require.NoError(t, err)
	for _, c := range s.Cells {
		agg := readJSON(t, filepath.Join(dir, "artifacts", "lanes", c.Label, runner.AggregateFile))
		assert.Equal(t, 2.0, agg["metadata"].(map[string]any)["num_successful_runs"], "%s: a kubernetes and a local trial", c.Label)
	}
}

// countVerb counts the fake cluster's actions of verb on Jobs.
func countVerb(cs *fake.Clientset, verb string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "jobs" {
			n++
		}
	}
	return n
}
