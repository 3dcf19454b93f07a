package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
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
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// Tests of AIPerf's remaining load and run flags (issue 25, requirement 5)
// against the mock: what each makes the client send, or write.

// sentRequest is one inference request as the mock received it.
type sentRequest struct {
	conn   string // the client's address: one per TCP connection
	header http.Header
	body   map[string]any
	raw    []byte
}

// captured records the inference requests that reach a mock.
type captured struct {
	mu   sync.Mutex
	reqs []sentRequest
}

// wrap is a startMockBehind wrapper: every /v1/ request is recorded, then
// served by the mock as it is.
func (c *captured) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			var m map[string]any
			_ = json.Unmarshal(b, &m) // a body that is not JSON stays nil
			c.mu.Lock()
			c.reqs = append(c.reqs, sentRequest{conn: r.RemoteAddr, header: r.Header.Clone(), body: m, raw: b})
			c.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// profileOut runs a quick profile against url with flags, unstored, and
// returns its artifact directory.
func profileOut(t *testing.T, url string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	inv := cli(t, dir, quick(url, append([]string{"--artifact-dir", "out", "--no-store"}, flags...)...)...)
	require.Equal(t, ExitOK, inv.code, "%v: %s", flags, inv.stderr)
	return filepath.Join(dir, "out")
}

func (c *captured) all() []sentRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sentRequest(nil), c.reqs...)
}

// TestUseLegacyMaxTokens: --use-legacy-max-tokens sends chat's output cap
// as max_tokens, which the mock honours; without it, max_completion_tokens.
func TestUseLegacyMaxTokens(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		var c captured
		m := startMockBehind(t, mock.Config{}, c.wrap)
		args := quick(m.URL, "--request-count", "4", "--no-store")
		if legacy {
			args = append(args, "--use-legacy-max-tokens")
		}
		inv := cli(t, "", args...)
		require.Equal(t, 0, inv.code, inv.stderr)
		reqs := c.all()
		require.Len(t, reqs, 4)
		for _, r := range reqs {
			want, not := "max_completion_tokens", "max_tokens"
			if legacy {
				want, not = not, want
			}
			assert.EqualValues(t, 4, r.body[want], "legacy=%v: %s", legacy, r.raw)
			assert.NotContains(t, r.body, not, "legacy=%v", legacy)
		}
	}
}

// TestSessionHeader: --session-header carries each session's id in the
// named header instead of X-Correlation-ID, the same on every turn of a
// session and different between sessions; a bad name is refused before
// any traffic.
func TestSessionHeader(t *testing.T) {
	for _, name := range []string{"", "x-session-id"} {
		var c captured
		m := startMockBehind(t, mock.Config{}, c.wrap)
		args := quick(m.URL, "--conversation-num", "3", "--session-turns-mean", "2", "--no-store")
		want, not := "X-Correlation-Id", "X-Session-Id"
		if name != "" {
			args = append(args, "--session-header", name)
			want, not = not, want
		}
		inv := cli(t, "", args...)
		require.Equal(t, 0, inv.code, inv.stderr)
		reqs := c.all()
		require.Len(t, reqs, 6)
		turns := map[string]int{}
		for _, r := range reqs {
			assert.Empty(t, r.header.Values(not), "session header %q", name)
			id := r.header.Get(want)
			require.NotEmpty(t, id, "session header %q: %v", name, r.header)
			turns[id]++
		}
		for id, n := range turns {
			assert.Equal(t, 2, n, "session %s: both turns under its id", id)
		}
		assert.Len(t, turns, 3)
	}
	m := startMock(t, mock.Config{})
	inv := cli(t, "", quick(m.URL, "--session-header", "X Session")...)
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, `--session-header must be an HTTP header name, e.g. X-Session-ID, got "X Session"`)
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

// TestNoSweepTable: a comma-list sweep prints a line as each trial starts
// and ends; --no-sweep-table leaves them out and keeps the sweep's first
// line and its table at the end.
func TestNoSweepTable(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	tok := tinyTokenizer(t)
	for _, quiet := range []bool{false, true} {
		args := quick(m.URL, "--tokenizer", tok, "--concurrency", "1,2", "--request-count", "2", "--ui", "simple", "--artifact-dir", "out")
		if quiet {
			args = append(args, "--no-sweep-table")
		}
		inv := cli(t, "", args...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, `sweep "profile"`, "the sweep's first line stays")
		assert.Contains(t, inv.stdout, `Sweep "profile" (id 1, complete)`, "the sweep table stays")
		for _, trial := range []string{"[1/2] profile concurrency_1 trial 1:", "[2/2] profile concurrency_2 trial 1:"} {
			if quiet {
				assert.NotContains(t, inv.stderr, trial)
			} else {
				assert.Contains(t, inv.stderr, trial)
			}
		}
	}
}

// TestMultiRunSeeds: AIPerf's multi-run seed policy. Without --random-seed
// every trial uses seed 42 and sends the same prompts
// (--set-consistent-seed, the default); --vary-seed-per-trial derives each
// trial's seed from the cell's, and --no-set-consistent-seed draws one, so
// the trials send different prompts; an explicit seed is kept.
func TestMultiRunSeeds(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	for _, tc := range []struct {
		flags []string
		seeds func(a, b float64) bool // as the JSON export holds them
		same  bool                    // both trials send the same prompts
	}{
		{nil, func(a, b float64) bool { return a == 42 && b == 42 }, true},
		{[]string{"--random-seed", "7"}, func(a, b float64) bool { return a == 7 && b == 7 }, true},
		{[]string{"--vary-seed-per-trial"}, func(a, b float64) bool {
			return a == float64(plan.TrialSeed(42, "base", 1)) && b == float64(plan.TrialSeed(42, "base", 2))
		}, false},
		{[]string{"--no-set-consistent-seed"}, func(a, b float64) bool { return a != b && a != 42 && b != 42 }, false},
	} {
		var c captured
		m := startMockBehind(t, mock.Config{Fast: true}, c.wrap)
		dir := t.TempDir()
		inv := cli(t, dir, quick(m.URL, append([]string{"--tokenizer", tok, "--request-count", "2", "--num-dataset-entries", "8",
			"--num-profile-runs", "2", "--artifact-dir", "out"}, tc.flags...)...)...)
		require.Equal(t, ExitOK, inv.code, "%v: %s", tc.flags, inv.stderr)
		var seeds [2]float64
		for i := range seeds {
			exp := readJSON(t, filepath.Join(dir, "out", "profile_runs", result.RunLabel(i+1), "profile_export_aiperf.json"))
			seeds[i] = exp["input_config"].(map[string]any)["aiperf_go"].(map[string]any)["random_seed"].(float64)
		}
		assert.True(t, tc.seeds(seeds[0], seeds[1]), "%v: seeds %v", tc.flags, seeds)
		reqs := c.all()
		require.Len(t, reqs, 4, "%v", tc.flags)
		prompts := func(rs []sentRequest) string {
			var b strings.Builder
			for _, r := range rs {
				b.WriteString(fmt.Sprint(r.body["messages"]))
			}
			return b.String()
		}
		assert.Equal(t, tc.same, prompts(reqs[:2]) == prompts(reqs[2:]), "%v: the trials' prompts", tc.flags)
	}
}

// TestWarmupAfterFirst: with --num-profile-runs only the first trial runs
// the warmup, as AIPerf's default; --no-profile-run-disable-warmup-after-first
// warms up every trial.
func TestWarmupAfterFirst(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	for flag, want := range map[string]int{"": 2 + 2 + 2, "--no-profile-run-disable-warmup-after-first": 2*2 + 2*2,
		"--profile-run-disable-warmup-after-first": 2 + 2 + 2} {
		m := startMock(t, mock.Config{Fast: true})
		args := quick(m.URL, "--tokenizer", tok, "--request-count", "2", "--warmup-request-count", "2", "--num-profile-runs", "2",
			"--artifact-dir", "out")
		if flag != "" {
			args = append(args, flag)
		}
		inv := cli(t, "", args...)
		require.Equal(t, ExitOK, inv.code, "%s: %s", flag, inv.stderr)
		assert.Equal(t, want, m.control().InferenceRequests, "%q: warmup and profiling requests of both trials", flag)
	}
}

// TestModelSelectionStrategy: with several models, round_robin (the
// default) gives the nth session model n mod count; random draws each
// session's model, the same draws for the same --random-seed; weighted is
// refused before any traffic.
func TestModelSelectionStrategy(t *testing.T) {
	models := func(flags ...string) string {
		var c captured
		m := startMockBehind(t, mock.Config{Fast: true}, c.wrap)
		args := quick(m.URL, append([]string{"--request-count", "30", "--no-store"}, flags...)...)
		args[slices.Index(args, "mock-model")] = "a,b,c"
		inv := cli(t, "", args...)
		require.Equal(t, ExitOK, inv.code, "%v: %s", flags, inv.stderr)
		var b strings.Builder
		for _, r := range c.all() {
			b.WriteString(fmt.Sprint(r.body["model"]))
		}
		return b.String()
	}
	assert.Equal(t, strings.Repeat("abc", 10), models(), "round robin by default, in issue order at concurrency 1")
	assert.Equal(t, strings.Repeat("abc", 10), models("--model-selection-strategy", "round_robin"))
	random := models("--model-selection-strategy", "random")
	assert.Equal(t, random, models("--model-selection-strategy", "random"), "the same seed draws the same models")
	assert.NotEqual(t, strings.Repeat("abc", 10), random)
	assert.NotEqual(t, random, models("--model-selection-strategy", "random", "--random-seed", "9"))
	for _, name := range []string{"a", "b", "c"} {
		assert.Contains(t, random, name)
	}
	m := startMock(t, mock.Config{})
	inv := cli(t, "", quick(m.URL, "--model-selection-strategy", "weighted")...)
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--model-selection-strategy weighted needs a weight per model")
}

// TestConnectionReuseStrategy: pooled (the default) sends every request on
// one kept-alive connection at concurrency 1; never opens one per request;
// sticky-user-sessions gives each session its own connection for all its
// turns, closed after its last, so no two sessions share one.
func TestConnectionReuseStrategy(t *testing.T) {
	conns := func(flags ...string) (byConn, bySession map[string][]string) {
		var c captured
		m := startMockBehind(t, mock.Config{Fast: true}, c.wrap)
		inv := cli(t, "", quick(m.URL, append([]string{"--conversation-num", "4", "--session-turns-mean", "3", "--no-store"},
			flags...)...)...)
		require.Equal(t, ExitOK, inv.code, "%v: %s", flags, inv.stderr)
		byConn, bySession = map[string][]string{}, map[string][]string{}
		for _, r := range c.all() {
			session := r.header.Get("X-Correlation-Id")
			byConn[r.conn] = append(byConn[r.conn], session)
			bySession[session] = append(bySession[session], r.conn)
		}
		require.Len(t, bySession, 4, "%v", flags)
		return byConn, bySession
	}
	byConn, _ := conns()
	// pooled: connections are reused. Not necessarily one: Go's transport
	// puts a connection back in its pool just after the body's end is
	// read, and on a busy machine the next request can start first.
	assert.Less(t, len(byConn), 12, "pooled: connections reused")
	byConn, _ = conns("--connection-reuse-strategy", "never")
	assert.Len(t, byConn, 12, "never: a connection per request")
	byConn, bySession := conns("--connection-reuse-strategy", "sticky-user-sessions", "--concurrency", "2")
	assert.Len(t, byConn, 4, "sticky: a connection per session")
	for session, cs := range bySession {
		assert.Equal(t, []string{cs[0], cs[0], cs[0]}, cs, "session %s: every turn on its connection", session)
	}
	for conn, sessions := range byConn {
		assert.Len(t, slices.Compact(slices.Clone(sessions)), 1, "connection %s serves one session: %v", conn, sessions)
	}
}

// TestConcurrencyBurst: AIPerf's concurrency_burst arrival pattern is
// concurrency mode (every request sent the instant a slot frees), kept
// under AIPerf's name in the exports; with a --request-rate it is refused
// before any traffic.
func TestConcurrencyBurst(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	out := profileOut(t, m.URL, "--arrival-pattern", "concurrency_burst", "--concurrency", "3", "--request-count", "9")
	assert.Equal(t, 9, m.control().InferenceRequests)
	exp := readJSON(t, filepath.Join(out, "profile_export_aiperf.json"))
	ic := exp["input_config"].(map[string]any)["aiperf_go"].(map[string]any)
	assert.Equal(t, "concurrency_burst", ic["request_rate_mode"])
	assert.Equal(t, 3.0, ic["concurrency"])
	assert.Equal(t, "concurrency", exp["client_audit"].(map[string]any)["mode"], "sent as concurrency mode")

	before := m.control().InferenceRequests
	inv := cli(t, "", quick(m.URL, "--arrival-pattern", "concurrency_burst", "--request-rate", "5")...)
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "concurrency_burst sends each request the instant a --concurrency slot is free and takes no --request-rate")
	assert.Equal(t, before, m.control().InferenceRequests, "nothing was sent")
}

// TestRequestRateSeries: --request-rate-series schedules the sends on its
// rate: with a constant pattern on 20/s for 1 s, then 20 to 100/s over
// 0.5 s, then 100/s, request n is scheduled when the rate's integral
// reaches n (read from the JSONL's scheduled_ns: the schedule, not the
// machine's speed); a bad file, or one with --request-rate, is refused
// before any traffic.
func TestRequestRateSeries(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	series := writeFile(t, dir, "rate.json", `{"points": [{"time_s": 0, "qps": 20}, {"time_s": 1, "qps": 20}, {"time_s": 1.5, "qps": 100}]}`)
	out := profileOut(t, m.URL, "--request-rate-series", series, "--arrival-pattern", "constant", "--request-count", "60",
		"--concurrency", "60")
	raw, err := os.ReadFile(filepath.Join(out, "profile_export.jsonl"))
	require.NoError(t, err)
	var sched []int64
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec struct {
			Metadata struct {
				ScheduledNs int64 `json:"scheduled_ns"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		sched = append(sched, rec.Metadata.ScheduledNs)
	}
	require.Len(t, sched, 60)
	slices.Sort(sched)
	for n, ns := range sched {
		want := float64(n) / 20 // ∫ = 20t
		if n > 20 {             // ∫ = 20 + 20x + 80x² over the ramp
			want = 1 + (-20+math.Sqrt(400+320*float64(n-20)))/160
		}
		if n > 50 {
			want = 1.5 + float64(n-50)/100
		}
		assert.InDelta(t, want, float64(ns-sched[0])/1e9, 1e-6, "request %d", n)
	}
	for args, msg := range map[string]string{
		"--request-rate-series " + series + " --request-rate 5":                                           "--request-rate-series sets the rate over time and cannot be combined with --request-rate",
		"--request-rate-series " + writeFile(t, dir, "bad.json", `{"points": [{"time_s": 1, "qps": 5}]}`): "points[0].time_s must be 0",
		"--request-rate-series " + filepath.Join(dir, "missing.json"):                                     "--request-rate-series cannot be read",
	} {
		before := m.control().InferenceRequests
		inv := cli(t, "", quick(m.URL, strings.Fields(args)...)...)
		assert.Equal(t, ExitUsage, inv.code, args)
		assert.Contains(t, inv.stderr, msg, args)
		assert.Equal(t, before, m.control().InferenceRequests, "%s: nothing was sent", args)
	}
}

// TestVariant: each --variant is a cell of one sweep, its flags set over
// the command line's, in a directory named by the variant; one variant,
// a key that is no flag, or a variant with comma lists is refused before
// any traffic.
func TestVariant(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	tok := tinyTokenizer(t)
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--tokenizer", tok, "--request-count", "4", "--artifact-dir", "out",
		"--variant", "fast: concurrency=2, isl=32", "--sweep-variant", "request_count=3, output-tokens-mean=2")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 4+3, m.control().InferenceRequests)
	for cell, want := range map[string]map[string]float64{
		"fast":      {"concurrency": 2, "synthetic_input_tokens_mean": 32, "request_count": 4, "output_tokens_mean": 4},
		"variant_2": {"request_count": 3, "synthetic_input_tokens_mean": 16, "output_tokens_mean": 2},
	} {
		exp := readJSON(t, filepath.Join(dir, "out", cell, "profile_export_aiperf.json"))
		ic := exp["input_config"].(map[string]any)["aiperf_go"].(map[string]any)
		for k, v := range want {
			assert.Equal(t, v, ic[k], "%s: %s", cell, k)
		}
	}
	for args, msg := range map[string]string{
		"--variant concurrency=2":                           "one --variant is one run",
		"--variant fast:nope=1 --variant concurrency=1":     `--variant "fast:nope=1": nope is not a profile flag`,
		"--variant concurrency=1 --variant concurrency=x":   `concurrency: "x" is not an integer`,
		"--variant isl=8 --variant isl=9 --concurrency 1,2": "--variant cannot be combined with comma lists (--concurrency)",
	} {
		before := m.control().InferenceRequests
		inv := cli(t, "", quick(m.URL, strings.Fields(args)...)...)
		assert.Equal(t, ExitUsage, inv.code, args)
		assert.Contains(t, inv.stderr, msg, args)
		assert.Equal(t, before, m.control().InferenceRequests, "%s: nothing was sent", args)
	}
}

// TestRequestContentType: --request-content-type multipart/form-data sends
// each body as a form, a field per key of the JSON body (strings as they
// are, other values as JSON), which the mock reads as that JSON: the run
// streams its replies as with JSON bodies.
func TestRequestContentType(t *testing.T) {
	var c captured
	m := startMockBehind(t, mock.Config{Fast: true}, c.wrap)
	out := profileOut(t, m.URL, "--request-content-type", "multipart/form-data", "--request-count", "3")
	reqs := c.all()
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		mt, params, err := mime.ParseMediaType(r.header.Get("Content-Type"))
		require.NoError(t, err)
		require.Equal(t, "multipart/form-data", mt)
		form, err := multipart.NewReader(bytes.NewReader(r.raw), params["boundary"]).ReadForm(1 << 20)
		require.NoError(t, err)
		assert.Equal(t, []string{"mock-model"}, form.Value["model"])
		assert.Equal(t, []string{"true"}, form.Value["stream"])
		assert.Equal(t, []string{"4"}, form.Value["max_completion_tokens"])
		var msgs []map[string]string
		require.NoError(t, json.Unmarshal([]byte(form.Value["messages"][0]), &msgs))
		assert.Equal(t, "user", msgs[0]["role"])
	}
	exp := readJSON(t, filepath.Join(out, "profile_export_aiperf.json"))
	assert.Equal(t, 3.0, metricAvg(t, exp, "request_count"), "every form was read and answered")
	assert.Equal(t, 4.0, metricAvg(t, exp, "output_sequence_length"), "the mock read max_completion_tokens from its field")
}

// TestConcurrencyAboveRequestCountWarns: a profiling phase that sends fewer
// requests than its concurrency says it never held that load; one that
// sends enough says nothing.
func TestConcurrencyAboveRequestCountWarns(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for _, c := range []struct {
		count string
		warn  bool
	}{{"4", true}, {"8", false}} {
		inv := cli(t, t.TempDir(), quick(m.URL, "--concurrency", "8", "--request-count", c.count, "--no-store", "-v")...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		const warning = "warning: phase profiling: its concurrency 8 is more than the 4 requests it sends: at most 4 are ever in flight"
		assert.Equal(t, c.warn, strings.Contains(inv.stderr, warning), inv.stderr)
	}
}

// TestRampLongerThanTheRunWarns: a ramp that cannot reach its target before
// the duration ends is flagged, on the console and in client_audit, with
// the load it reached: 4 slots ramped over 3 s open one a second, so 1 s
// of sending holds 1; a rate ramped to 40 req/s over 10 s is at 4 req/s
// after 1 s. A ramp that ends within the duration says nothing.
func TestRampLongerThanTheRunWarns(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for _, c := range []struct {
		args []string
		warn string
	}{
		{[]string{"--concurrency", "4", "--concurrency-ramp-duration", "3"},
			"only 1 are open before its 1 s duration ends: at most 1 are ever in flight, never 4"},
		{[]string{"--request-rate", "40", "--request-rate-ramp-duration", "10"},
			"has reached only 4 req/s of its 40 req/s when its 1 s duration ends"},
		{[]string{"--concurrency", "4", "--concurrency-ramp-duration", "0.5"}, ""},
	} {
		dir := t.TempDir()
		inv := cli(t, dir, quick(m.URL, append(c.args, "--benchmark-duration", "1", "--artifact-dir", "out", "--no-store")...)...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		audit := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))["client_audit"].(map[string]any)
		warnings := fmt.Sprint(audit["warnings"])
		if c.warn == "" {
			assert.NotContains(t, inv.stderr, "ramp", c.args)
			assert.NotContains(t, warnings, "ramp", c.args)
			continue
		}
		assert.Contains(t, inv.stderr, "warning: phase profiling: its ", c.args)
		assert.Contains(t, strings.Join(strings.Fields(inv.stderr), " "), c.warn, c.args)
		assert.Contains(t, warnings, c.warn, c.args)
	}
}
