package dashboard

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

const ms = int64(time.Millisecond)

// streamed is a successful streamed request sent at sent: its first token
// after ttft, then tokens-1 more itl apart.
func streamed(phase string, sent, ttft, itl int64, tokens int) metrics.Record {
	stamps := make([]int64, tokens)
	for i := range stamps {
		stamps[i] = sent + ttft + int64(i)*itl
	}
	return metrics.Record{Phase: phase, PhaseKind: plan.KindProfiling, Streaming: true, SentNs: sent,
		ResponseNs: metrics.StampsOf(stamps...), EndNs: stamps[tokens-1], OutputTokens: tokens}
}

func failed(phase, kind string, code int) metrics.Record {
	return metrics.Record{Phase: phase, PhaseKind: plan.KindProfiling,
		Error: &metrics.Error{Type: kind, Code: code, Message: "boom"}}
}

// finished is what the dashboard is handed of records.
func finished(records ...metrics.Record) []Finished {
	var out []Finished
	for i := range records {
		out = append(out, FinishedOf(&records[i], true))
	}
	return out
}

func feed(t *testing.T, m tea.Model, msgs ...tea.Msg) Model {
	t.Helper()
	for _, msg := range msgs {
		m, _ = m.Update(msg)
	}
	return m.(Model)
}

// number finds the number after label in text.
func number(t *testing.T, text, label string) float64 {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(label) + ` ([0-9.]+)`).FindStringSubmatch(text)
	require.NotNil(t, m, "%q in\n%s", label, text)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

func TestViewShowsPhaseProgressRatesPercentilesAndErrors(t *testing.T) {
	ph := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 8, Requests: 200}
	var first, second []metrics.Record
	for i := range 100 { // TTFT 1..100 ms, ITL 5 ms
		first = append(first, streamed("profiling", 0, int64(i+1)*ms, 5*ms, 11))
	}
	for range 20 { // ITL 10 ms
		second = append(second, streamed("profiling", 0, 50*ms, 10*ms, 3))
	}
	second = append(second, failed("profiling", "HTTPError", 500), failed("profiling", "HTTPError", 500),
		failed("profiling", "Timeout", 0))
	m := feed(t, NewModel("mock-model", true, Interval, nil),
		Snapshot{Phase: ph, ElapsedS: 1, Sent: 108, Done: 100, Finished: finished(first...)},
		Snapshot{Phase: ph, ElapsedS: 2, Sent: 131, Done: 123, Errors: 3, Finished: finished(second...)},
	)
	out := m.View().Content
	assert.Equal(t, m.Render(), out)
	for _, want := range []string{"mock-model", "phase       profiling · 2.0 s elapsed", "123/200 requests", " 62%",
		"in flight   8 of 8 slots", "target      concurrency 8\n", "completing  61.5 req/s · last 1.0 s: 23.0 req/s\n",
		"ETA 1.3 s", // 77 left at 61.5 req/s
	} {
		assert.Contains(t, out, want)
	}
	// Estimates within their 0.5% bucket of the exact percentiles.
	ttft := metrics.Compute(append(seq(1, 100), repeat(50, 20)...))
	ttftLine, itlLine := line(t, out, "TTFT ms"), line(t, out, "ITL ms")
	assert.InEpsilon(t, ttft.P50, number(t, ttftLine, "p50"), 0.01)
	assert.InEpsilon(t, 99, number(t, ttftLine, "p99"), 0.01) // rank 119 of 120
	assert.Contains(t, ttftLine, "(120 requests)")
	assert.InEpsilon(t, 5.0, number(t, itlLine, "p50"), 0.01)
	assert.InEpsilon(t, 10.0, number(t, itlLine, "p90"), 0.01)
	assert.Contains(t, out, "errors      3 · HTTPError 500: 2 · Timeout: 1")
}

// line is the line of text starting with prefix.
func line(t *testing.T, text, prefix string) string {
	t.Helper()
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	require.Failf(t, "no line", "%q in\n%s", prefix, text)
	return ""
}

func seq(from, to int) []float64 {
	var out []float64
	for v := from; v <= to; v++ {
		out = append(out, float64(v))
	}
	return out
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestViewRateModeDurationAndPhaseChange(t *testing.T) {
	warm := &plan.Phase{Name: "ramp", Kind: plan.KindWarmup, Concurrency: 4, Requests: 10}
	prof := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Rate: 50, RateMode: plan.RatePoisson,
		Concurrency: 16, Duration: 10}
	m := feed(t, NewModel("run", true, Interval, nil),
		Snapshot{Phase: warm, ElapsedS: 0.5, Sent: 10, Done: 10,
			Finished: finished(streamed("ramp", 0, 900*ms, ms, 2))})
	assert.Contains(t, m.Render(), "phase       ramp (warmup) · 0.5 s elapsed")
	m = feed(t, m,
		Snapshot{Phase: prof, ElapsedS: 4, Sent: 196, Done: 190,
			Finished: finished(streamed("profiling", 0, 30*ms, 2*ms, 4))},
	)
	out := m.Render()
	assert.Contains(t, out, "phase       profiling · 4.0 s elapsed · ETA 6.0 s")
	assert.Contains(t, out, " 40%  4.0/10 s, 190 requests done")
	assert.Contains(t, out, "in flight   6 (cap 16)")
	assert.Contains(t, out, "target      50.0 req/s (poisson)\nsending     49.0 req/s\ncompleting  47.5 req/s\n")
	assert.NotContains(t, out, "last", "no earlier sample of this phase")
	assert.InEpsilon(t, 30.0, number(t, out, "TTFT ms     p50"), 0.01, "the warmup's 900 ms is not this phase's")
	assert.Contains(t, out, "(1 requests)")
	assert.Contains(t, out, "errors      0")

	m = feed(t, m, Snapshot{Phase: prof, ElapsedS: 10.2, Sent: 500, Done: 500, Final: true})
	out = m.Render()
	assert.Contains(t, out, "10.2 s elapsed · done")
	assert.NotContains(t, out, "ETA")
	assert.Contains(t, out, "100%")
}

func TestViewBeforeLoadAndWithoutStreaming(t *testing.T) {
	m := NewModel("run", false, Interval, nil)
	assert.Contains(t, m.Render(), "starting...")
	ph := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 2}
	m = feed(t, m, Snapshot{Phase: ph, ElapsedS: 2, Sent: 12, Done: 10})
	out := m.Render()
	assert.Contains(t, out, "10 requests done")
	assert.NotContains(t, out, "TTFT", "no token timing without streaming")
	assert.NotContains(t, out, "ETA", "neither a count nor a duration")
	assert.Contains(t, out, "target      concurrency 2\ncompleting  5.0 req/s\n")

	fixed := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Fixed: true}
	out = feed(t, m, Snapshot{Phase: fixed, ElapsedS: 3, Sent: 12, Done: 12}).Render()
	assert.Contains(t, out, "target      the fixed schedule\ncompleting  4.0 req/s")
}

func TestUpdateQuitsOnFinalAndPrintsLog(t *testing.T) {
	m := NewModel("run", true, Interval, func() Snapshot { return Snapshot{Final: true} })
	_, cmd := m.Update(tickMsg{})
	require.NotNil(t, cmd)
	snap := cmd()
	require.IsType(t, Snapshot{}, snap)
	next, cmd := m.Update(logMsg("warning: x"))
	assert.NotNil(t, cmd)
	next, cmd = next.Update(snap)
	assert.Nil(t, cmd, "a log line is still being printed")
	_, cmd = next.Update(printedMsg{})
	require.NotNil(t, cmd)
	assert.Equal(t, tea.QuitMsg{}, cmd(), "the last line printed, the run ended: quit")

	_, cmd = m.Update(snap)
	require.NotNil(t, cmd)
	assert.Equal(t, tea.QuitMsg{}, cmd())
}

// TestUpdateQuitsWhenATickSnapshotArrivesAfterTheFinal: a tick's snapshot,
// taken before Close's final one, can arrive after it while a log line is
// being printed. The run stays ended: its records are counted, its older
// counters are not, no tick follows, and the printed line ends the program.
func TestUpdateQuitsWhenATickSnapshotArrivesAfterTheFinal(t *testing.T) {
	ph := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling}
	m := NewModel("run", true, Interval, func() Snapshot { return Snapshot{} })
	next, _ := m.Update(logMsg("warning: x"))
	next, cmd := next.Update(Snapshot{Phase: ph, ElapsedS: 2, Sent: 9, Done: 9, Final: true})
	assert.Nil(t, cmd, "a log line is still being printed")
	late := Snapshot{Phase: ph, ElapsedS: 1.75, Sent: 8, Done: 7,
		Finished: finished(streamed("profiling", 0, 10*ms, ms, 4))}
	next, cmd = next.Update(late)
	assert.Nil(t, cmd, "no tick after the final snapshot")
	next, cmd = next.Update(tickMsg{})
	assert.Nil(t, cmd, "a tick already scheduled takes no snapshot")
	out := next.(Model).Render()
	assert.Contains(t, out, "9 requests done\nin flight   0\n", "the final counters stand")
	assert.Contains(t, out, "(1 requests)", "the late snapshot's record is counted")
	_, cmd = next.Update(printedMsg{})
	require.NotNil(t, cmd)
	assert.Equal(t, tea.QuitMsg{}, cmd(), "the last line printed: quit")
}

func TestHistQuantilesWithinHalfAPercent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h hist
	var vals []float64
	for range 20000 {
		v := math.Exp(rng.NormFloat64()*1.5 + 3) // log-normal around 20 ms
		vals = append(vals, v)
		h.add(v)
	}
	exact := metrics.Compute(vals)
	for p, want := range map[float64]float64{50: exact.P50, 90: exact.P90, 99: exact.P99} {
		got, ok := h.quantile(p)
		require.True(t, ok)
		assert.InEpsilon(t, want, got, 0.006, "p%.0f", p)
	}
	var empty hist
	_, ok := empty.quantile(50)
	assert.False(t, ok)
	var tiny hist
	tiny.add(0)
	tiny.add(-1)
	v, ok := tiny.quantile(99)
	assert.True(t, ok)
	assert.Less(t, v, 1e-5, "non-positive values land in the lowest bucket")
}

// BenchmarkFold is the dashboard goroutine's cost per finished request.
func BenchmarkFold(b *testing.B) {
	ph := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 8}
	m := NewModel("run", true, Interval, nil)
	var records []metrics.Record
	for i := range 1000 {
		records = append(records, streamed("profiling", 0, int64(20+i%30)*ms, 5*ms, 100))
	}
	batch := finished(records...)
	for b.Loop() {
		m.fold(Snapshot{Phase: ph, ElapsedS: 1, Finished: batch})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/record")
}

// BenchmarkRecord is the finisher goroutine's cost per record handed over
// (a streamed reply of 100 tokens).
func BenchmarkRecord(b *testing.B) {
	d := &Dashboard{stream: true}
	r := streamed("profiling", 0, 20*ms, 5*ms, 100)
	i := 0
	for b.Loop() {
		d.Record(&r)
		if i++; i%1000 == 0 { // a tick's worth at 4,000 requests/s
			d.snapshot()
		}
	}
}

// TestViewEscapesControlCharacters: the run's name, a phase's name and an
// error's kind are shown with their control characters escaped.
func TestViewEscapesControlCharacters(t *testing.T) {
	const evil = "\x1b]0;pwned\a\x1b[2J\r\u009b1A\u202e"
	ph := &plan.Phase{Name: "p" + evil, Kind: plan.KindProfiling, Requests: 4}
	m := feed(t, NewModel("run"+evil, true, Interval, nil),
		Snapshot{Phase: ph, ElapsedS: 1, Sent: 2, Done: 1, Finished: finished(failed("p"+evil, "Kind"+evil, 500))})
	out := m.Render()
	const shown = `\x1b]0;pwned\x07\x1b[2J\r\u009b1A\u202e`
	assert.Contains(t, out, "aiperf dashboard · run"+shown+"\n")
	assert.Contains(t, out, "phase       p"+shown+" (profiling)")
	assert.Contains(t, out, "Kind"+shown+" 500")
	assert.False(t, strings.ContainsFunc(out, func(r rune) bool { return r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f || r == 0x202e }),
		"no control character but the view's newlines: %q", out)
}

// The last frame of a run cut short by a Ctrl-C says the phase stopped
// before its end and how many of its requests were cut, and does not count
// them as completions.
func TestFinalFrameOfAnInterruptedPhase(t *testing.T) {
	ph := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 4, Requests: 100}
	cut := metrics.Record{Phase: "profiling", PhaseKind: plan.KindProfiling, Cancelled: true}
	var recs []metrics.Record
	for range 7 {
		recs = append(recs, streamed("profiling", 0, 30*ms, 2*ms, 4))
	}
	for range 4 {
		recs = append(recs, cut)
	}
	m := feed(t, NewModel("run", true, Interval, nil),
		Snapshot{Phase: ph, ElapsedS: 1, Sent: 11, Done: 11, Finished: finished(recs...), Final: true})
	out := m.Render()
	assert.Contains(t, out, "1.0 s elapsed · stopped before its end")
	assert.NotContains(t, out, "· done")
	assert.Contains(t, out, "11/100 requests (4 of them cut)")
	assert.Contains(t, out, "completing  7.0 req/s")

	both := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 4, Requests: 100, Duration: 1}
	m = feed(t, NewModel("run", true, Interval, nil), Snapshot{Phase: both, ElapsedS: 1, Sent: 50, Done: 50, Final: true})
	assert.Contains(t, m.Render(), "· done", "its duration, the first of its two stops, ended it")
}

// TestFinalFrameOfAPhaseStoppedInItsGracePeriod: a Ctrl-C past a phase's
// duration, in its grace period, cuts the requests still in flight: the
// phase stopped before its end (its grace period's), not "done"; the grace
// period's own cut, with no Ctrl-C, is the phase's end.
func TestFinalFrameOfAPhaseStoppedInItsGracePeriod(t *testing.T) {
	ph := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 4, Duration: 2}
	done := streamed("profiling", 0, 30*ms, 2*ms, 4)
	for _, c := range []struct {
		by, want string
	}{{metrics.CutInterrupt, "3.8 s elapsed · stopped before its end"}, {metrics.CutGracePeriod, "3.8 s elapsed · done"}} {
		cut := metrics.Record{Phase: "profiling", PhaseKind: plan.KindProfiling, Cancelled: true, CutBy: c.by}
		m := feed(t, NewModel("run", true, Interval, nil),
			Snapshot{Phase: ph, ElapsedS: 3.8, Sent: 4, Done: 4, Finished: finished(done, done, cut, cut), Final: true})
		out := m.Render()
		assert.Contains(t, out, c.want, c.by)
		assert.Contains(t, out, "3.8/2 s, 4 requests done (2 of them cut)", c.by)
	}
}

// A percentile is never outside the values seen: with few values the
// bucket's middle could pass the largest.
func TestHistQuantileWithinTheValuesSeen(t *testing.T) {
	var h hist
	low := histMin * math.Exp(2000*histStep) * 1.0001 // just above its bucket's lower bound: the middle is ~0.5% more
	h.add(low)
	v, ok := h.quantile(99)
	require.True(t, ok)
	assert.Equal(t, low, v)
	h.add(2 * low)
	v, _ = h.quantile(1)
	assert.GreaterOrEqual(t, v, low)
}
