package load

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

func TestInitialUsersVirtualHistory(t *testing.T) {
	// AIPerf's example (user_centric_rate.py, user-centric-timing.md): 15
	// users, 20 turns, 1 QPS: the second column of its table, by start time.
	users, spawns := initialUsers(15, 20, 1, 15)
	turnsAt := map[int64]int{}
	for _, u := range users {
		turnsAt[u.at/1e9] = u.maxTurns
	}
	assert.Equal(t, map[int64]int{0: 0, 1: 6, 2: 11, 3: 16, 4: 2, 5: 7, 6: 12, 7: 17, 8: 3, 9: 8, 10: 13,
		11: 18, 12: 4, 13: 9, 14: 14}, turnsAt, "one user per second, the new one (every turn) first")
	require.Len(t, spawns, 15)
	assert.Contains(t, spawns, int64(20*15e9), "the new user's successor comes after its 20 turns")
	assert.Contains(t, spawns, int64(4e9+2*15e9), "the 2-turn user at 4 s is replaced after 2 gaps")

	// A common factor of users and lifetime takes the alternate spacing:
	// still one user per slot.
	users, _ = initialUsers(4, 3, 1, 4)
	seen := map[int64]bool{}
	for _, u := range users {
		assert.False(t, seen[u.at], "two users start at %d", u.at)
		seen[u.at] = true
	}
}

func TestUserCentricGapsAndRate(t *testing.T) {
	// 4 users at 200 req/s: a user's turns 20 ms apart, 200 sends a second
	// in all, a user's next turn only after its reply.
	f := &fakeSessions{clock: NewClock(), turns: 4, work: time.Millisecond}
	c := &collector{}
	e := &Engine{Clock: f.clock, Source: meanTurns{f, 4}, OnRecord: c.add}
	reports, err := e.Run(t.Context(), []plan.Phase{{Name: "p", Kind: plan.KindProfiling, Rate: 200, Users: 4,
		Duration: 0.4, GracePeriod: 1}})
	require.NoError(t, err)
	// Only bounds a slow machine cannot break: a late reply moves a turn
	// later, never earlier; the schedule's exact spacing is tested on the
	// pure functions above.
	gap := int64(20 * time.Millisecond)
	start := reports[0].StartNs
	turned := 0
	for sid, turns := range turnsBySession(c.recs) {
		for i := 1; i < len(turns); i++ {
			turned++
			d := turns[i].ScheduledNs - turns[i-1].ScheduledNs
			assert.GreaterOrEqual(t, d, gap, "session %d: turns at least the gap apart", sid)
			assert.GreaterOrEqual(t, turns[i].SentNs, turns[i-1].EndNs, "session %d: never two turns in flight", sid)
		}
	}
	assert.Positive(t, turned, "users came back for later turns")
	// A turn is due at its slot or later, never earlier, and users are
	// spawned on a fixed schedule: however late the replies, no more turns
	// are due before 0.4 s than the 80 slots of 200 req/s (and the four
	// users' first turns, which start them) hold. (Counting a window later
	// in the phase would race the machine: late turns of earlier slots
	// move into it.)
	due := 0
	for _, r := range c.recs {
		if r.ScheduledNs-start < int64(400*time.Millisecond) {
			due++
		}
	}
	assert.Positive(t, due)
	t.Logf("%d turns due before 0.4 s", due)
	assert.LessOrEqual(t, due, 80+4, "never above 200 req/s (4 users, a turn each 20 ms)")
	assert.Equal(t, reports[0].Sent, len(c.recs))
}

// meanTurns gives a fake source its mean turn count.
type meanTurns struct {
	*fakeSessions
	n float64
}

func (m meanTurns) MeanTurns() float64 { return m.n }
