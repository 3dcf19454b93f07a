package load

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// fakeSessions is a Source of sessions of turns turns each, delay apart (or
// at absolute offsets), that answer after work. It records what was sent
// and the sessions in flight.
type fakeSessions struct {
	clock  Clock
	turns  int
	delay  time.Duration
	abs    []int64 // absolute offsets of turns ≥ 1 (fixed schedule), when set
	work   time.Duration
	next   atomic.Int64 // conversations handed out by Next
	active atomic.Int64 // sessions between their first send and last return
	most   atomic.Int64

	mu    sync.Mutex
	convs []int // conversation of each session started, in order
}

type fakeSession struct {
	f    *fakeSessions
	conv int
}

func (f *fakeSessions) Next() Session       { return f.start(int(f.next.Add(1) - 1)) }
func (f *fakeSessions) Fixed(c int) Session { return f.start(c) }

func (f *fakeSessions) start(conv int) Session {
	f.mu.Lock()
	f.convs = append(f.convs, conv)
	f.mu.Unlock()
	return &fakeSession{f: f, conv: conv}
}

func (s *fakeSession) Turns() int { return s.f.turns }
func (s *fakeSession) Due(i int) (time.Duration, int64, bool) {
	if s.f.abs != nil {
		return 0, s.f.abs[i], true
	}
	return s.f.delay, 0, false
}

func (s *fakeSession) Send(ctx context.Context, i int, c Credit) metrics.Record {
	f := s.f
	if i == 0 {
		n := f.active.Add(1)
		for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
		}
	}
	rec := metrics.Record{Index: c.Index, Phase: c.Phase.Name, PhaseKind: c.Phase.Kind, ScheduledNs: c.ScheduledNs,
		SentNs: f.clock.Now(), Prompt: s.conv, URL: c.Session, Model: string(rune('0' + c.Turn))}
	select {
	case <-time.After(f.work):
	case <-ctx.Done():
		rec.Error = &metrics.Error{Type: "Cancelled"}
	}
	rec.EndNs = f.clock.Now()
	if i == f.turns-1 || rec.Error != nil {
		f.active.Add(-1)
	}
	return rec
}

// turnsBySession groups the records by session (Record.URL carries it here)
// in send order.
func turnsBySession(recs []metrics.Record) map[int][]metrics.Record {
	out := map[int][]metrics.Record{}
	slices.SortFunc(recs, func(a, b metrics.Record) int { return int(a.SentNs - b.SentNs) })
	for _, r := range recs {
		out[r.URL] = append(out[r.URL], r)
	}
	return out
}

func runSessions(t *testing.T, f *fakeSessions, fixed FixedStarts, ph plan.Phase) ([]PhaseReport, []metrics.Record) {
	t.Helper()
	c := &collector{}
	e := &Engine{Clock: f.clock, Source: f, Fixed: fixed, OnRecord: c.add}
	reports, err := e.Run(context.Background(), []plan.Phase{ph})
	require.NoError(t, err)
	return reports, c.recs
}

// assertTurnsInOrder checks every session: its turns go 0, 1, 2..., each
// scheduled no earlier than the previous turn's end plus the delay, and sent
// after its schedule.
func assertTurnsInOrder(t *testing.T, bySession map[int][]metrics.Record, delay time.Duration) {
	t.Helper()
	for sid, turns := range bySession {
		for i, r := range turns {
			assert.Equal(t, string(rune('0'+i)), r.Model, "session %d sends its turns in order", sid)
			assert.GreaterOrEqual(t, r.SentNs, r.ScheduledNs)
			if i > 0 {
				assert.GreaterOrEqual(t, r.ScheduledNs, turns[i-1].EndNs+int64(delay), "turn %d of session %d waits for the previous reply and its delay", i, sid)
			}
		}
	}
}

func TestConcurrencyModeRunsSessions(t *testing.T) {
	f := &fakeSessions{clock: NewClock(), turns: 3, delay: 2 * time.Millisecond, work: time.Millisecond}
	reports, recs := runSessions(t, f, nil, plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 2, Sessions: 5})
	require.Len(t, recs, 15, "5 sessions × 3 turns: started sessions finish")
	assert.Equal(t, 5, reports[0].Sessions)
	assert.LessOrEqual(t, f.most.Load(), int64(2), "concurrency counts sessions: a slot is held through the think time")
	by := turnsBySession(recs)
	assert.Len(t, by, 5)
	assertTurnsInOrder(t, by, f.delay)
}

func TestRequestCountCutsSessions(t *testing.T) {
	f := &fakeSessions{clock: NewClock(), turns: 4, work: time.Millisecond}
	reports, recs := runSessions(t, f, nil, plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 2, Requests: 7})
	assert.Len(t, recs, 7, "the request count counts turns")
	assert.Equal(t, 7, reports[0].Sent)
}

func TestRateModeContinuationsGoFirst(t *testing.T) {
	// 2 sessions of 3 turns at 500 req/s: once the 2 sessions started, the
	// ticks serve their later turns as they come due, never a third session.
	f := &fakeSessions{clock: NewClock(), turns: 3, delay: time.Millisecond, work: time.Millisecond}
	reports, recs := runSessions(t, f, nil, plan.Phase{Name: "p", Kind: plan.KindProfiling, Rate: 500,
		RateMode: plan.RateConstant, Sessions: 2})
	require.Len(t, recs, 6)
	assert.Equal(t, 2, reports[0].Sessions)
	assertTurnsInOrder(t, turnsBySession(recs), f.delay)
	for _, r := range recs {
		if r.Model == "0" {
			assert.Zero(t, (r.ScheduledNs-reports[0].StartNs)%int64(2*time.Millisecond), "first turns on the rate's grid")
		}
	}
}

func TestRateModeCapsSessions(t *testing.T) {
	f := &fakeSessions{clock: NewClock(), turns: 2, work: 2 * time.Millisecond}
	reports, recs := runSessions(t, f, nil, plan.Phase{Name: "p", Kind: plan.KindProfiling, Rate: 1e6,
		RateMode: plan.RateConstant, Concurrency: 2, Requests: 12, CapPolicy: plan.CapDelay})
	assert.Len(t, recs, 12)
	assert.LessOrEqual(t, f.most.Load(), int64(2), "the cap bounds sessions in flight")
	assert.GreaterOrEqual(t, reports[0].CapDelayed, 1)
	assertTurnsInOrder(t, turnsBySession(recs), 0)
}

func TestFixedScheduleReplaysTimestamps(t *testing.T) {
	ms := int64(time.Millisecond)
	starts := []struct {
		conv int
		at   int64
	}{{3, 0}, {1, 4 * ms}, {0, 4 * ms}, {2, 10 * ms}}
	fixed := func(yield func(int, int64) bool) {
		for _, s := range starts {
			if !yield(s.conv, s.at) {
				return
			}
		}
	}
	f := &fakeSessions{clock: NewClock(), turns: 2, delay: 3 * time.Millisecond, work: time.Millisecond}
	reports, recs := runSessions(t, f, fixed, plan.Phase{Name: "p", Kind: plan.KindProfiling, Fixed: true, Speedup: 2})
	require.Len(t, recs, 8, "every scheduled conversation, every turn")
	assert.Equal(t, []int{3, 1, 0, 2}, f.convs, "conversations start in schedule order")
	start := reports[0].StartNs
	firsts := map[int]int64{}
	for _, r := range recs {
		if r.Model == "0" {
			firsts[r.Prompt] = r.ScheduledNs - start
		}
	}
	assert.Equal(t, map[int]int64{3: 0, 1: 2 * ms, 0: 2 * ms, 2: 5 * ms}, firsts, "first turns at their timestamps, halved by the speed-up")
	assertTurnsInOrder(t, turnsBySession(recs), f.delay)

	// Later turns with their own timestamps are sent at them.
	f = &fakeSessions{clock: NewClock(), turns: 2, abs: []int64{0, 20 * ms}, work: time.Millisecond}
	reports, recs = runSessions(t, f, fixed, plan.Phase{Name: "p", Kind: plan.KindProfiling, Fixed: true})
	for _, r := range recs {
		if r.Model == "1" {
			assert.Equal(t, 20*ms, r.ScheduledNs-reports[0].StartNs)
		}
	}
}

// TestRateModeCapSkips: AIPerf's policy (the default) drops a new
// session's send that comes due while the cap is full; the schedule goes
// on, so every tick is either a send on time or a skip.
func TestRateModeCapSkips(t *testing.T) {
	f := &fakeSessions{clock: NewClock(), turns: 1, work: 20 * time.Millisecond}
	reports, recs := runSessions(t, f, nil, plan.Phase{Name: "p", Kind: plan.KindProfiling, Rate: 1000,
		RateMode: plan.RateConstant, Concurrency: 2, Duration: 0.2, GracePeriod: 1})
	r := reports[0]
	assert.LessOrEqual(t, f.most.Load(), int64(2), "the cap bounds sessions in flight")
	assert.Positive(t, r.CapSkipped)
	assert.Zero(t, r.CapDelayed, "nothing waits for a slot")
	assert.Len(t, recs, r.Sent)
	// Each tick the loop reached sent or skipped, once: the sends are on
	// distinct ticks of the grid, and every tick up to the last one sent
	// was sent or skipped. (How many of the 200 ticks it reached is not
	// asserted: a loop that wakes late near the end, on a loaded machine,
	// finds the phase over.)
	sent, last := map[int64]bool{}, int64(-1)
	for _, rec := range recs {
		at := rec.ScheduledNs - r.StartNs
		assert.Zero(t, at%int64(time.Millisecond), "sends stay on the grid")
		tick := at / int64(time.Millisecond)
		assert.False(t, sent[tick], "tick %d sent twice", tick)
		sent[tick], last = true, max(last, tick)
	}
	assert.LessOrEqual(t, r.Sent+r.CapSkipped, 200, "no more than the 200 ticks send or skip")
	assert.Greater(t, int64(r.Sent+r.CapSkipped), last, "every tick up to the last send (%d) sent or skipped", last)
}

// TestFixedScheduleGatedTurnIsScheduledAtTheReply: a later turn whose
// timestamp passes while its previous reply is still coming waits for the
// reply (open-loop replay); its schedule becomes the reply's end, so its
// send lag measures the client, not the server's slowness, and it is
// counted as reply-gated.
func TestFixedScheduleGatedTurnIsScheduledAtTheReply(t *testing.T) {
	ms := int64(time.Millisecond)
	fixed := func(yield func(int, int64) bool) {
		for c := range 3 {
			if !yield(c, int64(c)*ms) {
				return
			}
		}
	}
	// Each reply takes at least 30 ms: turn 1, stamped 1 ms after the
	// phase's start, always comes due before its previous reply ends.
	f := &fakeSessions{clock: NewClock(), turns: 2, abs: []int64{0, ms}, work: 30 * time.Millisecond}
	reports, recs := runSessions(t, f, fixed, plan.Phase{Name: "p", Kind: plan.KindProfiling, Fixed: true})
	require.Len(t, recs, 6)
	by := turnsBySession(recs)
	for sid, turns := range by {
		require.Len(t, turns, 2)
		assert.Equal(t, turns[0].EndNs, turns[1].ScheduledNs, "session %d: turn 1 is scheduled when the reply it waited for ended", sid)
		assert.GreaterOrEqual(t, turns[1].SentNs, turns[1].ScheduledNs)
	}
	assert.Equal(t, 3, reports[0].ReplyGated, "every turn 1 waited for its reply")
	assert.Equal(t, turnsFirstSched(recs), reports[0].FirstSchedNs)
	assert.Equal(t, turnsLastSched(recs), reports[0].LastSchedNs, "the phase's schedule span ends at the last gated turn's schedule")
}

// TestFixedScheduleTurnKeepsItsTimestampOrTheReply: whatever the timing,
// a later turn is scheduled at the later of its timestamp and its previous
// reply's end, and only the turns the reply held past their timestamp are
// counted as reply-gated.
func TestFixedScheduleTurnKeepsItsTimestampOrTheReply(t *testing.T) {
	ms := int64(time.Millisecond)
	fixed := func(yield func(int, int64) bool) {
		for c := range 4 {
			if !yield(c, 0) {
				return
			}
		}
	}
	// Turn 1 is stamped at the start: always held by turn 0's reply. Turn
	// 2 usually is not (its timestamp comes long after), but either way
	// holds the rule.
	f := &fakeSessions{clock: NewClock(), turns: 3, abs: []int64{0, 0, 200 * ms}, work: 2 * time.Millisecond}
	reports, recs := runSessions(t, f, fixed, plan.Phase{Name: "p", Kind: plan.KindProfiling, Fixed: true})
	require.Len(t, recs, 12)
	gated := 0
	for sid, turns := range turnsBySession(recs) {
		for i := 1; i < len(turns); i++ {
			at := reports[0].StartNs + f.abs[i]
			prev := turns[i-1].EndNs
			assert.Equal(t, max(at, prev), turns[i].ScheduledNs, "session %d turn %d", sid, i)
			if prev > at {
				gated++
			}
		}
	}
	assert.GreaterOrEqual(t, gated, 4, "every turn 1 waited for its reply")
	assert.Equal(t, gated, reports[0].ReplyGated)
}

func turnsFirstSched(recs []metrics.Record) int64 {
	return slices.MinFunc(recs, func(a, b metrics.Record) int { return int(a.ScheduledNs - b.ScheduledNs) }).ScheduledNs
}

func turnsLastSched(recs []metrics.Record) int64 {
	return slices.MaxFunc(recs, func(a, b metrics.Record) int { return int(a.ScheduledNs - b.ScheduledNs) }).ScheduledNs
}
