package mock

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usOf is d in microseconds, as GET /mock/timing reports durations.
func usOf(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// backgroundStream sends a streaming request and reads it away until the
// test cancels it (or it ends).
func backgroundStream(t *testing.T, url string, body any) (cancel func()) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(b)))
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // cancelled before the headers
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
	}()
	cancel = sync.OnceFunc(func() { stop(); <-done })
	t.Cleanup(cancel)
	return cancel
}

func clearTimingHTTP(t *testing.T, base string) {
	t.Helper()
	resp, err := http.Post(base+"/mock/timing/clear", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
}

// At each concurrency c the mock prices every decode step by the batch it
// begins with: once all c requests generate, each step it schedules is
// exactly itl + lin×c and saw c requests, as Steady says. The handshakes
// are the mock's own gauge (all c admitted) and records (steps priced
// since the clear); nothing races the clock.
func TestStepTimeGrowsWithBatch(t *testing.T) {
	cfg := Config{TTFT: 5, ITL: 2, ITLPerSeq: 0.5, MaxNumSeqs: 8}
	for _, c := range []int{1, 3, 6} {
		t.Run(fmt.Sprint("concurrency ", c), func(t *testing.T) {
			s, base := start(t, cfg)
			cancels := make([]func(), c)
			for i := range cancels {
				cancels[i] = backgroundStream(t, base+"/v1/chat/completions", chatBody("m", 1_000_000, true, false))
			}
			require.Eventually(t, func() bool { return s.sched.live() == c }, 30*time.Second, time.Millisecond, "all %d admitted", c)
			clearTimingHTTP(t, base) // every step priced from now on begins with all c running
			require.Eventually(t, func() bool { return s.Timing().Schedule.Gap.Count >= uint64(3*c) }, 30*time.Second, time.Millisecond)
			tm := getTiming(t, base)
			for _, cancel := range cancels {
				cancel()
			}

			want := 2*time.Millisecond + time.Duration(c)*500*time.Microsecond
			assert.Equal(t, want, cfg.Steady(c, 0, 1_000_000).Step, "the closed form")
			sc := tm.Schedule
			assert.Equal(t, int64(c), sc.Batch.Min, "every step saw the whole batch")
			assert.Equal(t, int64(c), sc.Batch.Max)
			assert.Equal(t, sc.Batch.Count, int64(sc.Gap.Count), "one decode step per count")
			assert.InDelta(t, usOf(want), sc.Gap.MinUS, 1e-6, "scheduled ITL = itl + lin×c")
			assert.InDelta(t, usOf(want), sc.Gap.MaxUS, 1e-6)
			assert.Equal(t, 0.5, sc.ITLConcurrencyLinMS)
			assert.Equal(t, 8, sc.MaxNumSeqs)
			// As written, a gap is its step plus its chunk's lateness at
			// most (minus the previous one's).
			if tm.Gap.Count > 0 {
				assert.LessOrEqual(t, tm.Gap.MaxUS, usOf(want)+tm.Lateness.MaxUS+1e-3)
			}
		})
	}
}

// A prompt's uncached tokens are prefilled in ⌈U / budget⌉ steps: the
// first costs --ttft and the prefill of every uncached token, each further
// one an engine step. Every decode step adds --itl-per-osl-token-ms per
// output token. Each value is the mock's own exact schedule for one
// request at a time (a batch of 1); what it wrote is that schedule plus
// lateness it reports.
func TestPrefillChunksAndOutputLength(t *testing.T) {
	full := Config{TTFT: 3, ITL: 1, Prefill: 10, ITLPerSeq: 0.5, ITLPerOSL: 0.125, MaxBatchedTokens: 64, CountTokens: countWords}
	old := Config{TTFT: 3, ITL: 1, Prefill: 10, CountTokens: countWords}
	ms := msDuration
	for _, tc := range []struct {
		name      string
		cfg       Config
		words     int // prompt tokens
		repeat    bool
		stream    bool
		first     time.Duration // scheduled time to first token
		step      time.Duration
		batchRead int // steps priced by the batch
	}{
		// step(1) = 1 + 0.5×1 + 0.125×4 = 2 ms
		{"within the budget", full, 64, false, true, ms(3 + 0.64), ms(2), 3},
		{"one token over: two chunks", full, 65, false, true, ms(3 + 0.65 + 2), ms(2), 1 + 3},
		{"four chunks", full, 200, false, true, ms(3 + 2 + 3*2), ms(2), 3 + 3},
		{"warm: 192 cached, 8 left", full, 200, true, true, ms(3 + 0.08), ms(2), 3},
		{"non-streaming: one step more", full, 64, false, false, ms(3 + 0.64), ms(2), 4},
		{"old knobs alone: as before", old, 200, false, true, ms(3 + 2), ms(1), 0},
		{"old knobs, non-streaming", old, 200, false, false, ms(3 + 2), ms(1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, base := start(t, tc.cfg)
			prompt := strings.TrimSpace(strings.Repeat("w ", tc.words))
			body := map[string]any{"prompt": prompt, "max_tokens": 4, "stream": tc.stream}
			if tc.stream {
				body["stream_options"] = map[string]any{"include_usage": true}
			}
			if tc.repeat {
				readAll(t, post(t, base+"/v1/completions", body))
				clearTimingHTTP(t, base)
			}
			reply := readAll(t, post(t, base+"/v1/completions", body))
			if tc.repeat {
				assert.Contains(t, reply, `"cached_tokens":192`)
			}
			tm := getTiming(t, base)
			sc := tm.Schedule
			require.Equal(t, uint64(1), sc.First.Count)
			assert.InDelta(t, usOf(tc.first), sc.First.MinUS, 1e-6, "scheduled TTFT")
			assert.Equal(t, uint64(1), sc.QueueWait.Count)
			assert.Zero(t, sc.QueueWait.MaxUS)
			gaps := uint64(3) // 4 tokens; a non-streaming reply is due one step after its last
			if !tc.stream {
				gaps = 4
			}
			require.Equal(t, gaps, sc.Gap.Count)
			assert.InDelta(t, usOf(tc.step), sc.Gap.MinUS, 1e-6, "scheduled ITL")
			assert.InDelta(t, usOf(tc.step), sc.Gap.MaxUS, 1e-6)
			assert.Equal(t, int64(tc.batchRead), sc.Batch.Count)
			if tc.batchRead > 0 {
				assert.Equal(t, int64(1), sc.Batch.Max, "one request at a time")
			}
			if !tc.stream {
				return
			}
			steady := tc.cfg.Steady(1, map[bool]int{false: tc.words, true: 8}[tc.repeat], 4)
			assert.Equal(t, tc.first, steady.TTFT, "the closed form")
			assert.Equal(t, tc.step, steady.Step)
			// As written: the first chunk went out its lateness after the
			// schedule, and the gaps add up to the scheduled ones give or
			// take the first and last chunks' lateness.
			assert.GreaterOrEqual(t, tm.FirstChunk.MinUS, sc.First.MinUS)
			assert.LessOrEqual(t, tm.FirstChunk.MinUS, sc.First.MinUS+tm.Lateness.MaxUS+1e-3)
			assert.InDelta(t, sc.Gap.SumUS, tm.Gap.SumUS, tm.Lateness.MaxUS+1e-3)
		})
	}
}

// Under --max-num-seqs a request that waits is scheduled from the moment
// it gets its slot: its scheduled time to first token is its queue wait
// plus its first step, exactly, and it waits for the running request to
// end.
func TestQueueWaitInSchedule(t *testing.T) {
	_, base := start(t, Config{TTFT: 2, ITL: 1, MaxNumSeqs: 1})
	cancelA := runningStream(t, base) // holds the slot
	done := make(chan string, 1)
	go func() {
		resp, err := http.Post(base+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"stream":true}`))
		if err != nil {
			done <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(bufio.NewReader(resp.Body))
		done <- string(b)
	}()
	require.Eventually(t, func() bool {
		return single(t, scrape(t, base+"/metrics"), "vllm:num_requests_waiting") == 1
	}, 30*time.Second, time.Millisecond)
	cancelA()
	assert.Contains(t, <-done, "[DONE]")

	sc := getTiming(t, base).Schedule
	require.Equal(t, uint64(2), sc.First.Count)
	require.Equal(t, uint64(2), sc.QueueWait.Count)
	assert.Zero(t, sc.QueueWait.MinUS, "the first got its slot at once")
	assert.Positive(t, sc.QueueWait.MaxUS, "the second waited")
	assert.InDelta(t, sc.QueueWait.MaxUS+usOf(2*time.Millisecond), sc.First.MaxUS, 1e-3, "first token due its first step after the slot")
	assert.InDelta(t, sc.QueueWait.SumUS+2*usOf(2*time.Millisecond), sc.First.SumUS, 1e-3)
}

// --trial-jitter-cv draws a latency scale at start and at every reset the
// mock answers, from --random-seed's sequence: two mocks with one seed
// draw the same scales; a faulted reset draws none; requests admitted in
// a trial are scheduled at its scale exactly.
func TestTrialJitter(t *testing.T) {
	cfg := Config{TTFT: 10, ITL: 1, TrialJitterCV: 0.5, RandomSeed: 42, AdminFailStatus: 503, AdminFailCount: 1}
	sa, a := start(t, cfg)
	_, b := start(t, cfg)
	var scales []float64
	for i := range 4 {
		ta, tb := getTiming(t, a).Schedule, getTiming(t, b).Schedule
		assert.Equal(t, ta.LatencyScale, tb.LatencyScale, "one seed, one sequence")
		assert.Equal(t, max(1, i), ta.Trials, "start, then one per answered reset (the first is a fault)")
		scales = append(scales, ta.LatencyScale)

		clearTimingHTTP(t, a)
		readAll(t, post(t, a+"/v1/completions", map[string]any{"prompt": "x", "max_tokens": 2, "stream": true}))
		sc := getTiming(t, a).Schedule
		assert.InDelta(t, math.Round(10e6*ta.LatencyScale)/1e3, sc.First.MinUS, 1e-9, "TTFT at the trial's scale")
		assert.InDelta(t, math.Round(1e6*ta.LatencyScale)/1e3, sc.Gap.MinUS, 1e-9, "ITL at the trial's scale")

		for _, base := range []string{a, b} {
			readAll(t, post(t, base+"/reset_prefix_cache", nil))
		}
	}
	assert.Equal(t, scales[0], scales[1], "the faulted reset drew nothing")
	assert.NotEqual(t, scales[1], scales[2])
	assert.NotEqual(t, scales[2], scales[3])

	// The draws have mean 1 and the coefficient of variation asked for
	// (a fixed seed: a fixed sample).
	var sum, sum2 float64
	const n = 20000
	for range n {
		v := sa.trialScale()
		sum += v
		sum2 += v * v
	}
	mean := sum / n
	assert.InDelta(t, 1, mean, 0.02)
	assert.InDelta(t, 0.5, math.Sqrt(sum2/n-mean*mean)/mean, 0.03)

	_, c := start(t, Config{TTFT: 10})
	readAll(t, post(t, c+"/reset_prefix_cache", nil))
	sc := getTiming(t, c).Schedule
	assert.Equal(t, 1.0, sc.LatencyScale, "no noise without --trial-jitter-cv")
	assert.Equal(t, 2, sc.Trials)
}

// The closed form on the example (--ttft 20 --itl 4
// --max-num-seqs 8, 32 output tokens) and on a batch-priced one.
func TestSteady(t *testing.T) {
	ms := msDuration
	cfg := Config{TTFT: 20, ITL: 4, MaxNumSeqs: 8}
	at8 := cfg.Steady(8, 100, 32)
	assert.Equal(t, Steady{Batch: 8, Step: ms(4), TTFT: ms(20), E2E: ms(20 + 31*4), Throughput: 8 * 32 / 0.144}, at8)
	at9 := cfg.Steady(9, 100, 32)
	assert.Equal(t, at8.TTFT, at9.TTFT)
	assert.Equal(t, time.Duration(0), at9.ShortWait)
	assert.Equal(t, ms(144), at9.LongWait, "one in eight waits a whole request")
	assert.Equal(t, 1.0/8, at9.LongShare)
	assert.Equal(t, ms(18), at9.MeanWait)
	assert.InDelta(t, 8*32/0.144, at9.Throughput, 1e-9, "saturated")
	at20 := cfg.Steady(20, 100, 32) // 12 beyond 8: waves of 8
	assert.Equal(t, ms(144), at20.ShortWait)
	assert.Equal(t, ms(288), at20.LongWait)
	assert.Equal(t, 4.0/8, at20.LongShare)
	assert.Equal(t, ms(12*144/8.0), at20.MeanWait)

	batched := Config{TTFT: 10, ITL: 2, ITLPerSeq: 0.5, Prefill: 10, MaxBatchedTokens: 64}
	st := batched.Steady(4, 200, 10)
	assert.Equal(t, ms(4), st.Step, "2 + 0.5×4")
	assert.Equal(t, ms(10+2+3*4), st.TTFT, "4 chunks: ttft + prefill + 3 steps")
	assert.Equal(t, ms(24+9*4), st.E2E)
	assert.Zero(t, st.MeanWait)
	assert.InDelta(t, 4*10/0.060, st.Throughput, 1e-9)
	assert.Equal(t, Steady{}, batched.Steady(0, 10, 10))
	assert.Equal(t, Steady{Batch: 4}, Config{Fast: true, ITLPerSeq: 1}.Steady(4, 10, 10), "no latency under --fast")
	assert.Equal(t, 4_350_000*time.Nanosecond, Config{ITL: 4.35}.Steady(1, 0, 1).Step, "flags round to the nearest ns")
}

// BenchmarkPacerStep is the latency model's cost per token on top of the
// clock: pricing a step and recording it (--fast, so nothing sleeps).
func BenchmarkPacerStep(b *testing.B) {
	s, err := New(Config{Fast: true})
	require.NoError(b, err)
	now := time.Now()
	p := s.newPacer(now, now, 100, b.N)
	ctx := context.Background()
	b.ReportAllocs()
	for k := 0; b.Loop(); k++ {
		p.wait(ctx, k)
	}
}
