package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/shard"
	"github.com/aiperf-go/aiperf/internal/shard/fakeworker"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// workerOf is the request id's per-process prefix: one per worker.
func workerOf(l jsonlLine) string { return strings.SplitN(l.Metadata.XRequestID, "-", 2)[0] }

// TestWorkersShardOneCell runs one cell from 4 worker processes against
// the mock: every request sent once (the count exact, the dataset's draws
// those of one process), one KV reset before any load and one profiler
// bracket around it, the merged TTFT percentiles those of the merged
// per-request export, and each worker's clock and records in the audit.
func TestWorkersShardOneCell(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	m := startMock(t, mock.Config{TTFT: 5, ITL: 1})
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "result.json")
	args := quick(m.URL, "--tokenizer", tok, "--concurrency", "8", "--request-count", "103", "--workers", "4",
		"--num-dataset-entries", "40", "--reset-kv-cache", "--server-profiler", "--artifact-dir", filepath.Join(dir, "w4"),
		"--result-file", resultFile)
	inv := cli(t, dir, args...)
	require.Equal(t, 0, inv.code, inv.stderr)

	c := m.control()
	assert.Equal(t, 1, c.ResetCount)
	assert.Equal(t, 1, c.ProfilerStarts)
	assert.Equal(t, 1, c.ProfilerStops)
	assert.Equal(t, 103, c.InferenceRequests)
	kinds := m.kinds()
	hooks := slices.DeleteFunc(slices.Clone(kinds), func(k string) bool { return strings.HasPrefix(k, "request_") })
	assert.Equal(t, []string{"reset", "start_profile", "stop_profile"}, hooks)
	assert.Less(t, slices.Index(kinds, "start_profile"), slices.Index(kinds, "request_start"), "the profiler starts before any worker sends")
	assert.Greater(t, slices.Index(kinds, "stop_profile"), lastIndex(kinds, "request_end"), "and stops once every worker drained")

	lines := jsonlLines(t, filepath.Join(dir, "w4", "profile_export.jsonl"))
	require.Len(t, lines, 103)
	perWorker := map[string]int{}
	workerIDs := map[string]string{} // request-id prefix → worker_id
	var ttft []float64
	for _, l := range lines {
		perWorker[workerOf(l)]++
		if id, seen := workerIDs[workerOf(l)]; seen {
			assert.Equal(t, id, l.Metadata.WorkerID, "one worker_id per worker")
		}
		workerIDs[workerOf(l)] = l.Metadata.WorkerID
		ttft = append(ttft, l.Metrics["time_to_first_token"].Value.(float64))
	}
	assert.Len(t, perWorker, 4, "every worker sent")
	assert.ElementsMatch(t, []string{"worker_0", "worker_1", "worker_2", "worker_3"}, slices.Collect(maps.Values(workerIDs)),
		"worker_id names the process that sent the request")
	for _, n := range perWorker {
		assert.Contains(t, []int{25, 26}, n, "103 requests shared 26, 26, 26, 25")
	}
	want := metrics.Compute(ttft)
	export := readJSON(t, filepath.Join(dir, "w4", "profile_export_aiperf.json"))
	got := export["time_to_first_token"].(map[string]any)
	for k, v := range map[string]float64{"p50": want.P50, "p90": want.P90, "p99": want.P99, "avg": want.Avg, "max": want.Max} {
		assert.InDelta(t, v, got[k].(float64), 1e-6, "merged TTFT %s", k)
	}
	assert.Equal(t, 103.0, export["request_count"].(map[string]any)["avg"])
	assert.Regexp(t, `Workers: 4 processes .*clock offsets within \d+\.\d+ ms`, inv.stdout)

	// The same cell from one process sends the same conversations.
	one := cli(t, dir, quick(m.URL, "--tokenizer", tok, "--concurrency", "8", "--request-count", "103",
		"--num-dataset-entries", "40", "--artifact-dir", filepath.Join(dir, "w1"), "--no-store")...)
	require.Equal(t, 0, one.code, one.stderr)
	convs := func(ls []jsonlLine) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Metadata.ConversationID)
		}
		slices.Sort(out)
		return out
	}
	assert.Equal(t, convs(jsonlLines(t, filepath.Join(dir, "w1", "profile_export.jsonl"))), convs(lines))

	b, err := os.ReadFile(resultFile)
	require.NoError(t, err)
	var run result.Run
	require.NoError(t, json.Unmarshal(b, &run))
	require.Len(t, run.Audit.Workers, 4)
	records := 0
	for i, w := range run.Audit.Workers {
		assert.Regexp(t, regexp.MustCompile(`^worker \d \(pid \d+\)$`), w.Name)
		assert.Contains(t, w.Name, "worker "+string(rune('0'+i)))
		assert.Positive(t, w.ClockRTTNs)
		// One machine, one clock, but each process anchors its clock to
		// the wall clock at its start, and a process descheduled between
		// the two readings (a loaded machine: 4 ms seen beside CPU
		// burners) starts with an offset, which the coordinator measures
		// and corrects. What must hold whatever the load: an offset of
		// that size, not a unit's error (seconds, or ns read as µs).
		assert.Less(t, abs(w.ClockOffsetNs), int64(time.Second), "one machine: an offset of scheduling delays, not of units")
		records += w.Records
	}
	assert.Equal(t, 103, records)

}

func lastIndex(xs []string, x string) int {
	for i := len(xs) - 1; i >= 0; i-- {
		if xs[i] == x {
			return i
		}
	}
	return -1
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestWorkersConstantRateMerges: 4 workers at a constant 50 req/s merge
// into the constant schedule of one process, a send every 20 ms.
func TestWorkersConstantRateMerges(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	m := startMock(t, mock.Config{TTFT: 2, ITL: 1})
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "result.json")
	inv := cli(t, dir, quick(m.URL, "--tokenizer", tok, "--request-rate", "50", "--request-rate-mode", "constant",
		"--request-count", "41", "--workers", "4", "--artifact-dir", filepath.Join(dir, "out"), "--no-store",
		"--result-file", resultFile)...)
	require.Equal(t, 0, inv.code, inv.stderr)
	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, 41)
	var sched []int64
	for _, l := range lines {
		sched = append(sched, l.Metadata.ScheduledNs)
	}
	slices.Sort(sched)
	within := clockTolerance(t, resultFile)
	for j := 1; j < len(sched); j++ {
		assert.InDelta(t, 20e6, float64(sched[j]-sched[j-1]), within, "gap %d", j)
	}
	assert.InDelta(t, 800e6, float64(sched[len(sched)-1]-sched[0]), within)
}

// clockTolerance is how far apart, in ns, two workers' scheduled stamps
// may be from the one schedule they share: exact but for the estimates of
// their clocks' offsets, each within half the round trip of the ping it
// rests on (well under a ms on a quiet machine; more where the workers
// were starved), plus a ms of rounding.
func clockTolerance(t *testing.T, resultFile string) float64 {
	t.Helper()
	run, err := runner.ReadResult(resultFile)
	require.NoError(t, err)
	require.NotEmpty(t, run.Audit.Workers)
	var rtt int64
	for _, w := range run.Audit.Workers {
		rtt = max(rtt, w.ClockRTTNs)
	}
	return 1e6 + float64(rtt)
}

// failingWorkers starts real workers but replaces worker bad (if any) with
// a process that exits at once, or with a fake worker misbehaving in the
// fake mode (when set), or, when watched is set, starts it as a real
// worker whose first record the test sees arrive (watched is closed); it
// remembers every pid it started.
type failingWorkers struct {
	bench.Workers
	bad     int
	fake    fakeworker.Mode
	watched chan struct{}
	mu      sync.Mutex
	pids    []int
}

func (f *failingWorkers) Start(ctx context.Context, i int) (*shard.Peer, error) {
	if i != f.bad {
		p, err := f.Workers.Start(ctx, i)
		if err == nil {
			var pid int
			_, err = fmt.Sscanf(p.Name, "worker %d (pid %d)", new(int), &pid)
			f.remember(pid)
		}
		return p, err
	}
	cmd := exec.Command("sh", "-c", "echo 'no dataset here' >&2; exit 3")
	switch {
	case f.watched != nil:
		cmd = exec.Command(f.Workers.(runner.Workers).Binary, "worker")
		cmd.Env = append(os.Environ(), runner.ChildEnv+"=1")
	case f.fake != "":
		cmd = exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), fakeworker.Env+"="+string(f.fake))
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f.remember(cmd.Process.Pid)
	var r io.Reader = out
	if f.watched != nil {
		r = &recordSniffer{r: out, seen: f.watched}
	}
	return &shard.Peer{Name: fmt.Sprintf("worker %d (pid %d)", i, cmd.Process.Pid), Conn: shard.NewConn(r, in),
		Wait: func() error {
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
			}
			return nil
		},
		Kill: func() { _ = cmd.Process.Kill() }}, nil
}

// recordSniffer closes seen once a record's line went through it.
type recordSniffer struct {
	r    io.Reader
	seen chan struct{}
	tail []byte
	done bool
}

func (s *recordSniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if !s.done {
		s.tail = append(s.tail, p[:n]...)
		if bytes.Contains(s.tail, []byte(`{"t":"rec"`)) {
			s.done = true
			close(s.seen)
		}
		s.tail = s.tail[max(0, len(s.tail)-16):]
	}
	return n, err
}

func (f *failingWorkers) remember(pid int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pids = append(f.pids, pid)
}

// TestWorkerThatCannotStartFailsTheCell: one of 4 workers exits before it
// is ready: the cell fails, naming it, before any request; the profiler
// never started; no worker process is left.
func TestWorkerThatCannotStartFailsTheCell(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	m := startMock(t, mock.Config{TTFT: 2, ITL: 1})
	var fw *failingWorkers
	prev := startWorkers
	startWorkers = func(self string, n int, log io.Writer) bench.Workers {
		fw = &failingWorkers{Workers: runner.Workers{Binary: self, Count: n, Log: log}, bad: 2}
		return fw
	}
	t.Cleanup(func() { startWorkers = prev })
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--tokenizer", tok, "--concurrency", "4", "--request-count", "20", "--workers", "4",
		"--reset-kv-cache", "--server-profiler", "--artifact-dir", filepath.Join(dir, "out"), "--no-store")...)
	assert.Equal(t, ExitFailure, inv.code, inv.stderr)
	assert.Regexp(t, `worker 2 \(pid \d+\) did not start: exit status 3.*no dataset here`, inv.stderr)
	c := m.control()
	assert.Zero(t, c.InferenceRequests)
	assert.Zero(t, c.ProfilerStarts)
	assert.Zero(t, c.ProfilerStops)
	require.Len(t, fw.pids, 4)
	assertGone(t, fw.pids)
}

// watchWorkers makes --workers start through a failingWorkers with the
// given bad worker (-1: none) for the rest of the test.
func watchWorkers(t *testing.T, bad int) *failingWorkers {
	fw := &failingWorkers{bad: bad}
	prev := startWorkers
	startWorkers = func(self string, n int, log io.Writer) bench.Workers {
		fw.Workers = runner.Workers{Binary: self, Count: n, Log: log}
		return fw
	}
	t.Cleanup(func() { startWorkers = prev })
	return fw
}

// holdEachSender holds the inference requests of each sending process
// (told apart by their request ids' prefix) from its third on, until
// release is closed; stuck is closed once n processes are held, each then
// provably mid-phase with at least one request ended.
type holdEachSender struct {
	n       int
	mu      sync.Mutex
	sent    map[string]int
	held    int
	stuck   chan struct{}
	release chan struct{}
}

func newHoldEachSender(n int) *holdEachSender {
	return &holdEachSender{n: n, sent: map[string]int{}, stuck: make(chan struct{}), release: make(chan struct{})}
}

func (g *holdEachSender) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/completions") && g.hold(r) {
			select {
			case <-g.release:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func (g *holdEachSender) hold(r *http.Request) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	prefix := strings.SplitN(r.Header.Get("X-Request-ID"), "-", 2)[0]
	if g.sent[prefix]++; g.sent[prefix] != 3 {
		return g.sent[prefix] > 3
	}
	if g.held++; g.held == g.n {
		close(g.stuck)
	}
	return true
}

// TestWorkerKilledMidPhase: a worker killed while it sends is named in
// the error with the records received from it, which are kept and
// exported; the profiler stops once, and the cell fails. Both workers are
// held at the server mid-phase, and a record of the one killed has
// arrived, when it is killed: it dies while it sends, with records to
// keep, whatever the machine's speed; the other is then told to stop (its
// requests, held at the server until the run ends, are cut).
func TestWorkerKilledMidPhase(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	g := newHoldEachSender(2)
	m := startMockBehind(t, mock.Config{TTFT: 5, ITL: 1}, g.wrap)
	fw := watchWorkers(t, 1)
	fw.watched = make(chan struct{})
	ended := make(chan struct{})
	var waited atomic.Bool // the live worker was not stopped: its held requests had to be let go
	go func() {
		defer close(g.release)
		for _, ready := range []chan struct{}{g.stuck, fw.watched} {
			select {
			case <-ready:
			case <-time.After(hangGuard):
				return // the test fails on its own
			}
		}
		fw.mu.Lock()
		_ = syscall.Kill(fw.pids[1], syscall.SIGKILL)
		fw.mu.Unlock()
		select { // the live worker's requests stay held: only its stop ends them
		case <-ended:
		case <-time.After(hangGuard):
			waited.Store(true)
		}
	}()
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "result.json")
	inv := cli(t, dir, quick(m.URL, "--tokenizer", tok, "--concurrency", "4", "--request-count", "40", "--workers", "2",
		"--server-profiler", "--artifact-dir", filepath.Join(dir, "out"), "--result-file", resultFile)...)
	close(ended)
	assert.False(t, waited.Load(), "the live worker was told to stop when the other died")
	assert.Equal(t, ExitFailure, inv.code, inv.stderr)
	died := regexp.MustCompile(`worker 1 \(pid \d+\) died during the profiling phase \((\d+) records received from it are kept\): signal: killed`).
		FindStringSubmatch(inv.stderr)
	require.NotNil(t, died, inv.stderr)
	c := m.control()
	assert.Equal(t, 1, c.ProfilerStarts)
	assert.Equal(t, 1, c.ProfilerStops)
	run := assertLostWorkerKept(t, resultFile, filepath.Join(dir, "out"))
	killed := run.Audit.Workers[1].Records
	assert.Equal(t, died[1], strconv.Itoa(killed), "the error says how many of its records were kept")
	assert.LessOrEqual(t, killed, 2, "only its first two requests were answered")
}

// assertLostWorkerKept checks a failed 2-worker cell whose worker 1 was
// lost mid-phase: its records that arrived are in the result's audit and
// exported beside worker 0's; it returns the result.
func assertLostWorkerKept(t *testing.T, resultFile, out string) result.Run {
	t.Helper()
	var run result.Run
	b, err := os.ReadFile(resultFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &run))
	assert.Equal(t, result.StatusFailed, run.Status)
	require.Len(t, run.Audit.Workers, 2)
	lost := run.Audit.Workers[1].Records
	assert.Positive(t, lost, "the lost worker's records that arrived are kept")
	lines := jsonlLines(t, filepath.Join(out, "profile_export.jsonl"))
	perWorker := map[string]int{}
	for _, l := range lines {
		perWorker[workerOf(l)]++
	}
	require.Len(t, perWorker, 2, "both workers' records are exported")
	assert.Contains(t, slices.Collect(maps.Values(perWorker)), lost)
	assert.Equal(t, len(lines), run.Audit.Workers[0].Records+lost)
	return run
}

// assertGone checks that every pid ended and was reaped.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "pid %d is gone", pid)
	}
}

// TestWorkersInterrupted: Ctrl-C stops every worker: an interrupted run
// with what was sent, the profiler stopped once, no worker left.
func TestWorkersInterrupted(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	var got receivedIDs
	m := startMockBehind(t, mock.Config{TTFT: 5, ITL: 1}, got.wrap)
	fw := watchWorkers(t, -1)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		for deadline := time.Now().Add(hangGuard); m.control().InferenceRequests < 30 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel(fmt.Errorf("%w by interrupt", context.Canceled))
	}()
	dir := t.TempDir()
	inv := cliCtx(ctx, t, dir, quick(m.URL, "--tokenizer", tok, "--concurrency", "4", "--request-count", "100000", "--workers", "3",
		"--server-profiler", "--artifact-dir", filepath.Join(dir, "out"), "--no-store")...)
	assert.Equal(t, ExitInterrupted, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "interrupted (")
	c := m.control()
	assert.Equal(t, 1, c.ProfilerStarts)
	assert.Equal(t, 1, c.ProfilerStops)
	// Every request the server received has its record in the export (a
	// request cut before it left has one too; one retried on a fresh
	// connection reached the server under one id, maybe twice).
	exported := map[string]bool{}
	for _, l := range jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl")) {
		exported[l.Metadata.XRequestID] = true
	}
	received := got.all()
	require.NotEmpty(t, received)
	for _, id := range received {
		assert.True(t, exported[id], "request %s reached the server: it is exported", id)
	}
	require.Len(t, fw.pids, 3)
	assertGone(t, fw.pids)
}

// receivedIDs records the X-Request-ID of every inference request a
// server receives.
type receivedIDs struct {
	mu  sync.Mutex
	ids []string
}

func (g *receivedIDs) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/completions") {
			g.mu.Lock()
			g.ids = append(g.ids, r.Header.Get("X-Request-ID"))
			g.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (g *receivedIDs) all() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.ids)
}

// TestWorkersRefused: --workers that cannot be honoured are refused
// before anything is sent.
func TestWorkersRefused(t *testing.T) {
	m := startMock(t, mock.Config{})
	for _, c := range []struct {
		args []string
		want string
	}{
		{quick(m.URL, "--concurrency", "4", "--workers", "5"), "--workers 5 is more than the profiling phase's concurrency 4"},
		{quick(m.URL, "--concurrency", "8", "--request-count", "3", "--workers", "4"), "phase's request count 3"},
		{quick(m.URL, "--concurrency", "8", "--workers", "0"), "--workers must be at least 1, got 0"},
		{quick(m.URL, "--executor", "kubernetes"), "--executor kubernetes runs its --workers as pods"},
		{quick(m.URL, "--concurrency", "8", "--workers", "2", "--export-level", "raw"), "--export-level raw is not available with --workers 2"},
	} {
		inv := cli(t, "", c.args...)
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, c.want)
		assert.Contains(t, inv.stderr, "nothing was sent")
	}
	assert.Zero(t, m.control().InferenceRequests)
}

// TestSweepWorkers: aiperf sweep --workers passes the workers to every
// trial, each stored as one run from that many processes; a cell that
// cannot be shared out so is refused before anything is sent.
func TestSweepWorkers(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	script := writeFile(t, dir, "w.star", smallBase+`
sweep(name = "sharded", base = base.replace(concurrency = 2), scenarios = [{"name": "c2"}, {"name": "c4", "concurrency": 4}])
`)
	tok := tinyTokenizer(t)
	refused := writeFile(t, dir, "one.star", smallBase+`
sweep(name = "one", base = base, scenarios = [{"name": "c1"}])
`)
	inv := cli(t, dir, "sweep", refused, "--set", "url="+m.URL, "--set", "tok="+tok, "--workers", "2")
	require.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--workers 2 is more than the profiling phase's concurrency 1")

	inv = cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--set", "tok="+tok, "--workers", "2")
	require.Equal(t, 0, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Equal(t, 8, m.control().InferenceRequests)
	db := openStore(t, dir)
	runs, err := db.ListRuns(context.Background(), store.RunFilter{Sweep: "sharded"})
	require.NoError(t, err)
	require.Len(t, runs, 2)
	for _, row := range runs {
		stored, err := db.GetRun(context.Background(), row.ID, false)
		require.NoError(t, err)
		require.Len(t, stored.Audit.Workers, 2, "the store keeps each worker's account")
		assert.Equal(t, 4, stored.Audit.Workers[0].Records+stored.Audit.Workers[1].Records)
		assert.Positive(t, stored.Audit.Workers[1].ClockRTTNs)
	}
	results := filesNamed(t, dir, runner.ResultFile)
	require.Len(t, results, 2)
	for _, path := range results {
		run, err := runner.ReadResult(path)
		require.NoError(t, err)
		assert.Equal(t, result.StatusComplete, run.Status)
		require.Len(t, run.Audit.Workers, 2, path)
		assert.Equal(t, 4, run.Audit.Workers[0].Records+run.Audit.Workers[1].Records)
	}
}

// TestWorkersReplayATrace: a timestamped trace is dealt round-robin to the
// workers, every record at its own time: the merged schedule is the
// trace's.
func TestWorkersReplayATrace(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{TTFT: 2, ITL: 1})
	dir := t.TempDir()
	var trace strings.Builder
	for i := range 21 {
		fmt.Fprintf(&trace, `{"timestamp": %d, "input_length": 16, "output_length": 2}`+"\n", i*40)
	}
	path := writeFile(t, dir, "trace.jsonl", trace.String())
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--streaming", "--ui", "none",
		"--input-file", path, "--custom-dataset-type", "mooncake_trace", "--workers", "4",
		"--artifact-dir", filepath.Join(dir, "out"), "--no-store", "--result-file", filepath.Join(dir, "result.json"))
	require.Equal(t, 0, inv.code, inv.stderr)
	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, 21)
	perWorker := map[string]int{}
	var sched []int64
	for _, l := range lines {
		perWorker[workerOf(l)]++
		sched = append(sched, l.Metadata.ScheduledNs)
	}
	assert.Len(t, perWorker, 4)
	slices.Sort(sched)
	within := clockTolerance(t, filepath.Join(dir, "result.json"))
	for j := 1; j < len(sched); j++ {
		assert.InDelta(t, 40e6, float64(sched[j]-sched[j-1]), within, "gap %d", j)
	}
}

// TestWorkersBoundedBeforeAnything: worker counts no load could use are
// refused (exit 2) before anything is allocated or sent.
func TestWorkersBoundedBeforeAnything(t *testing.T) {
	m := startMock(t, mock.Config{})
	dir := t.TempDir()
	var trace strings.Builder
	for i := range 3 {
		fmt.Fprintf(&trace, `{"timestamp": %d, "input_length": 16, "output_length": 2}`+"\n", i*40)
	}
	path := writeFile(t, dir, "trace.jsonl", trace.String())
	script := writeFile(t, dir, "w.star", smallBase+`
sweep(name = "w", base = base.replace(concurrency = 4), scenarios = [{"name": "c4"}])
`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{quick(m.URL, "--request-rate", "5", "--benchmark-duration", "600", "--workers", "1000000"),
			"--workers 1000000 is more than 256, the most a cell may have"},
		{[]string{"sweep", script, "--set", "url=" + m.URL, "--set", "tok=" + tinyTokenizer(t), "--workers", "1000000"},
			"--workers 1000000 is more than 256"},
		{quick(m.URL, "--request-rate", "2", "--benchmark-duration", "1", "--workers", "4"),
			"--workers 4 leaves a worker less than one of the 2 requests the profiling phase sends (2/s for 1 s)"},
		{[]string{"profile", "-m", "mock-model", "-u", m.URL, "--ui", "none", "--input-file", path, "--custom-dataset-type",
			"mooncake_trace", "--reset-kv-cache", "--workers", "4", "--no-store"},
			"--workers 4 is more than the 3 entries of the fixed schedule"},
	} {
		inv := cli(t, dir, c.args...)
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, c.want)
		assert.Contains(t, inv.stderr, "nothing was sent")
	}
	ctl := m.control()
	assert.Zero(t, ctl.InferenceRequests)
	assert.Zero(t, ctl.ResetCount, "not even the KV reset")
}
