package load

import (
	"context"
	"maps"
	"runtime"
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

// drawSource numbers the conversations it hands out and records the ones
// sent. Its Next yields, so that without begin's ordering another slot
// runs between a slot's draw and its claim.
type drawSource struct {
	clock Clock
	draws atomic.Int64
	mu    sync.Mutex
	sent  []int
	at    map[int64]int // a first turn's scheduled time → its conversation
}

func (d *drawSource) Next() Session {
	n := int(d.draws.Add(1) - 1)
	runtime.Gosched()
	return drawn{d, n}
}

func (d *drawSource) Fixed(conv int) Session { return drawn{d, conv} }

type drawn struct {
	d    *drawSource
	conv int
}

func (drawn) Turns() int                           { return 1 }
func (drawn) Due(int) (time.Duration, int64, bool) { return 0, 0, false }
func (s drawn) Send(_ context.Context, _ int, c Credit) metrics.Record {
	s.d.mu.Lock()
	s.d.sent = append(s.d.sent, s.conv)
	if s.d.at != nil {
		s.d.at[c.ScheduledNs] = s.conv
	}
	s.d.mu.Unlock()
	now := s.d.clock.Now()
	return metrics.Record{Index: c.Index, Phase: c.Phase.Name, PhaseKind: c.Phase.Kind, ScheduledNs: c.ScheduledNs, SentNs: now, EndNs: now}
}

// TestConcurrencySendsEveryConversationItDraws: at concurrency 64 with a
// count of 2, the engine draws exactly two conversations and sends each
// once. Every slot used to start a session while none had claimed yet, so
// up to 64 were drawn and the two sent were those of the slots that
// claimed first: over a dataset of two entries (a shuffle's pass), one
// entry twice and the other never, and a report of 64 sessions.
func TestConcurrencySendsEveryConversationItDraws(t *testing.T) {
	for range 20 {
		d := &drawSource{clock: NewClock()}
		reps, err := (&Engine{Clock: d.clock, Source: d}).Run(context.Background(),
			[]plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 64, Requests: 2}})
		require.NoError(t, err)
		slices.Sort(d.sent)
		assert.Equal(t, []int{0, 1}, d.sent, "the first two conversations drawn, each once")
		assert.EqualValues(t, 2, d.draws.Load(), "conversations drawn")
		require.Len(t, reps, 1)
		assert.Equal(t, 2, reps[0].Sessions)
	}
}

// TestUsersDrawInTheirOrder: user-centric mode gives its users the
// sampler's conversations in the order they start, whatever order their
// goroutines run in, so a seed sends each conversation at the same time
// run after run. The 16 initial users draw conversations 0 to 15 (users
// spawned later draw after them and are left out); a late goroutine may
// lose its send to the count, so only the order of those sent is judged.
func TestUsersDrawInTheirOrder(t *testing.T) {
	for range 10 {
		d := &drawSource{clock: NewClock(), at: map[int64]int{}}
		_, err := (&Engine{Clock: d.clock, Source: d}).Run(context.Background(),
			[]plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Rate: 1000, Users: 16, Requests: 32}})
		require.NoError(t, err)
		var convs []int // the initial users' conversations, by their time
		for _, at := range slices.Sorted(maps.Keys(d.at)) {
			if c := d.at[at]; c < 16 {
				convs = append(convs, c)
			}
		}
		require.NotEmpty(t, convs)
		assert.True(t, slices.IsSorted(convs), "conversations by start time: %v", convs)
	}
}
