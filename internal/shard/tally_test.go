package shard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestSeenSet: each number is new once; a million dense numbers cost a
// bit each, scattered ones a page each.
func TestSeenSet(t *testing.T) {
	var s seen
	for x := range 1_000_000 {
		require.True(t, s.add(x))
	}
	for _, x := range []int{0, 1023, 1024, 999_999} {
		assert.False(t, s.add(x), "%d twice", x)
	}
	assert.Len(t, s.pages, (1_000_000+pageBits-1)/pageBits, "128 KB for a million")
	assert.True(t, s.add(maxNumber))
	assert.False(t, s.add(maxNumber))
	assert.True(t, s.add(maxNumber-1))
}

// TestRecordAfterItsDrainIsRefused: once a worker said a phase drained,
// every request of it had ended: a record of it that ended later (past
// the slack) is refused, naming the phase.
func TestRecordAfterItsDrainIsRefused(t *testing.T) {
	c := &Coordinator{Clock: load.NewClock(), Peers: []*Peer{{Name: "worker 0"}}}
	phases := []plan.Phase{{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 1}}
	c.setup(phases, []Spec{{Phases: phases}})
	c.startNs[0].Store(1)
	c.peers[0].slack.Store(1000)
	c.peers[0].tally[0].drainedAt = 5_000
	rec := metrics.Record{Index: 4, RequestNum: 4, Phase: "warmup", PhaseKind: plan.KindWarmup, SentNs: 5_500, EndNs: 6_800}
	assert.EqualError(t, c.tallyRecord(0, 0, &rec), "record 4: the warmup phase's request ended at 0.007 ms, after this "+
		"worker reported the phase drained (0.005 ms on the coordinator's clock)")
	rec.EndNs = 5_900 // within the slack: a late record of a request that had ended
	require.NoError(t, c.tallyRecord(0, 0, &rec))
}

// TestCheckDone: a done report's counts must be in range, within the
// worker's share and equal to what arrived of it; its stamps must lie in
// the phase's window.
func TestCheckDone(t *testing.T) {
	c := &Coordinator{Clock: load.NewClock(), Peers: []*Peer{{Name: "worker 0"}}}
	phases := []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 1, Requests: 3}}
	c.setup(phases, []Spec{{Phases: phases}})
	c.startNs[0].Store(1_000)
	c.peers[0].slack.Store(100)
	afterStamps(c)
	for i := range 3 {
		rec := metrics.Record{Index: i, RequestNum: i, Cancelled: i == 2}
		require.NoError(t, c.tallyRecord(0, 0, &rec))
	}
	good := func() *Done {
		return &Done{Reports: []load.PhaseReport{{Phase: phases[0], Sent: 3, Sessions: 3, Cancelled: 1,
			StartNs: 1_000, FirstSchedNs: 1_000, LastSchedNs: 1_010}}}
	}
	require.NoError(t, c.checkDone(0, good()))
	for name, tc := range map[string]struct {
		edit func(*load.PhaseReport)
		want string
	}{
		"fewer sent":    {func(r *load.PhaseReport) { r.Sent = 2 }, "it reported sending 2 requests of the profiling phase, but 3 records of it arrived"},
		"beyond share":  {func(r *load.PhaseReport) { r.Sent = 5 }, "it reported sending 5 requests of the profiling phase, beyond its share of 3"},
		"cancelled":     {func(r *load.PhaseReport) { r.Cancelled = 0 }, "it reported 0 requests of the profiling phase cancelled, but 1 cancelled records of it arrived"},
		"negative":      {func(r *load.PhaseReport) { r.CapSkipped = -1 }, "its report of the profiling phase has cap_skipped -1, out of range"},
		"other phase":   {func(r *load.PhaseReport) { r.Phase.Name = "warmup" }, `its report 0 is of a phase "warmup", not the profiling phase`},
		"early start":   {func(r *load.PhaseReport) { r.StartNs = 1 }, "its report of the profiling phase has start_ns 0.000 ms, outside the phase's window"},
		"sched reverse": {func(r *load.PhaseReport) { r.FirstSchedNs = 1_020 }, "its report of the profiling phase has its first send scheduled after its last"},
	} {
		d := good()
		tc.edit(&d.Reports[0])
		err := c.checkDone(0, d)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tc.want, name)
		}
	}
	assert.EqualError(t, c.checkDone(0, &Done{}), "it reported sending 0 requests of the profiling phase, but 3 records of it arrived")
	assert.EqualError(t, c.checkDone(0, &Done{Reports: make([]load.PhaseReport, 2)}), "it reported 2 phases; the cell has 1")
}

// afterStamps waits until c's clock is past the stamps these tests'
// reports carry (1,000–1,010 ns), which a report must not have from the
// future: however fast the machine sets up, they are in the past.
func afterStamps(c *Coordinator) {
	for c.Clock.Now() < 2_000 {
	}
}

// TestCheckDoneShortfall: in a phase bounded by its counts alone that
// nothing cut short, a worker's report must reach its share, of requests
// or of sessions (whichever ends the phase first): one short of it fails,
// naming the phase and the numbers. A phase with a duration, a fixed
// schedule, a worker whose own run failed or workers told to halt or stop
// may end short.
func TestCheckDoneShortfall(t *testing.T) {
	check := func(ph plan.Phase, sent, sessions int, runErr string, cut bool) error {
		c := &Coordinator{Clock: load.NewClock(), Peers: []*Peer{{Name: "worker 0"}}}
		phases := []plan.Phase{ph}
		c.setup(phases, []Spec{{Phases: phases}})
		c.startNs[0].Store(1_000)
		c.peers[0].slack.Store(100)
		afterStamps(c)
		c.cutShort.Store(cut)
		for i := range sent {
			rec := metrics.Record{Index: i, RequestNum: i}
			require.NoError(t, c.tallyRecord(0, 0, &rec))
		}
		return c.checkDone(0, &Done{Err: runErr, Reports: []load.PhaseReport{{Phase: ph, Sent: sent, Sessions: sessions,
			StartNs: 1_000, FirstSchedNs: 1_000, LastSchedNs: 1_010}}})
	}
	counted := plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 2, Requests: 100}
	const uncut = ", though nothing cut the phase short (no interrupt, halt, failure or duration)"
	assert.EqualError(t, check(counted, 10, 10, "", false), "it reported sending 10 requests of the profiling phase "+
		"(10 records of it arrived), short of its share of 100"+uncut)
	require.NoError(t, check(counted, 100, 100, "", false))

	sessions := plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 2, Sessions: 8}
	assert.EqualError(t, check(sessions, 21, 7, "", false), "it reported starting 7 sessions of the profiling phase "+
		"(21 records of it arrived), short of its share of 8"+uncut)
	require.NoError(t, check(sessions, 24, 8, "", false), "every session started, each of several turns")

	both := plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 2, Requests: 30, Sessions: 8}
	require.NoError(t, check(both, 30, 6, "", false), "the request count reached first")
	require.NoError(t, check(both, 16, 8, "", false), "the sessions started first, each done")
	assert.EqualError(t, check(both, 16, 6, "", false), "it reported sending 16 requests and starting 6 sessions of "+
		"the profiling phase (16 records of it arrived), short of both its share of 30 requests and its share of 8 sessions"+uncut)

	timed := counted
	timed.Duration = 1
	fixed := counted
	fixed.Fixed = true
	for name, err := range map[string]error{
		"a duration":             check(timed, 10, 10, "", false),
		"a fixed schedule":       check(fixed, 10, 10, "", false),
		"its own run failed":     check(counted, 10, 10, "stopped by SIGINT during its load", false),
		"told to halt or stop":   check(counted, 10, 10, "", true),
		"a phase it never began": check(counted, 0, 0, "", true),
	} {
		assert.NoError(t, err, name)
	}
	assert.ErrorContains(t, check(counted, 0, 0, "", false), "it reported sending 0 requests of the profiling phase "+
		"(0 records of it arrived), short of its share of 100", "a phase never begun unasked")
}
