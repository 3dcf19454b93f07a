package load

import (
	"cmp"
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// fakeNode is a conversation of a fake tree: its turns, the branches each
// turn starts (by node name), and those started before its turn 0.
type fakeNode struct {
	turns    int
	branches map[int][]fakeBranch
	pre      []string
	delay0   time.Duration // its turn 0's delay, as a branch
	silent   bool          // its turns send nothing (an orchestrator's rounds)
	delay    time.Duration // its later turns' delay
	slow     bool          // its requests never end on their own
}

type fakeBranch struct {
	node   string
	joinAt int
}

// fakeTree is a Source whose every session is the tree under root. Each
// record's Conversation names the node, Turn its turn.
type fakeTree struct {
	clock Clock
	nodes map[string]fakeNode
	root  string
	work  time.Duration

	// hold, when set, is a node whose turns wait until the second root's
	// turn 0 was sent (second closes then; roots counts them).
	hold   string
	roots  atomic.Int32
	second chan struct{}
	// slowSent, when set, is called as a slow node's request goes out.
	slowSent func()
}

type fakeTreeSession struct {
	t    *fakeTree
	name string
}

func (f *fakeTree) Next() Session     { return &fakeTreeSession{f, f.root} }
func (f *fakeTree) Fixed(int) Session { return f.Next() }

func (s *fakeTreeSession) Turns() int { return s.t.nodes[s.name].turns }
func (s *fakeTreeSession) Due(i int) (time.Duration, int64, bool) {
	if i == 0 {
		return s.t.nodes[s.name].delay0, 0, false
	}
	return s.t.nodes[s.name].delay, 0, false
}

func (s *fakeTreeSession) Silent(int) bool { return s.t.nodes[s.name].silent }

func (s *fakeTreeSession) Send(ctx context.Context, i int, c Credit) metrics.Record {
	rec := metrics.Record{Index: c.Index, Phase: c.Phase.Name, ScheduledNs: c.ScheduledNs, SentNs: s.t.clock.Now(),
		Conversation: s.name, Turn: i, Session: c.Session}
	if s.name == s.t.root && i == 0 && s.t.roots.Add(1) == 2 && s.t.second != nil {
		close(s.t.second)
	}
	if s.name == s.t.hold && s.t.roots.Load() < 2 {
		select {
		case <-s.t.second:
		case <-time.After(time.Minute): // the next root never started: the slot was held
			rec.Error = &metrics.Error{Type: "NeverReleased"}
		}
	}
	work := s.t.work
	if s.t.nodes[s.name].slow {
		work = time.Hour
		if s.t.slowSent != nil {
			s.t.slowSent()
		}
	}
	select {
	case <-time.After(work):
	case <-ctx.Done():
		rec.Error = &metrics.Error{Type: "Cancelled"}
	}
	rec.EndNs = s.t.clock.Now()
	return rec
}

func (s *fakeTreeSession) Branches(i int, _ metrics.Record) []Branch {
	n := s.t.nodes[s.name]
	var out []Branch
	if i < 0 {
		for _, name := range n.pre {
			out = append(out, Branch{Session: &fakeTreeSession{s.t, name}})
		}
	}
	for _, b := range n.branches[i] {
		out = append(out, Branch{Session: &fakeTreeSession{s.t, b.node}, JoinAt: b.joinAt})
	}
	return out
}

// byNode indexes the records by node and turn.
func byNode(recs []metrics.Record) map[string]map[int]metrics.Record {
	out := map[string]map[int]metrics.Record{}
	for _, r := range recs {
		if out[r.Conversation] == nil {
			out[r.Conversation] = map[int]metrics.Record{}
		}
		out[r.Conversation][r.Turn] = r
	}
	return out
}

func runTreePhase(t *testing.T, f *fakeTree, ph plan.Phase) ([]PhaseReport, []metrics.Record) {
	t.Helper()
	c := &collector{}
	e := &Engine{Clock: f.clock, Source: f, OnRecord: c.add}
	reports, err := e.Run(context.Background(), []plan.Phase{ph})
	require.NoError(t, err)
	return reports, c.recs
}

// A root forks two children at its last turn, spawns a sub-agent at turn 0
// joined at turn 2, and one before its turn 0; the sub-agent spawns one of
// its own in the background.
func agentTree() map[string]fakeNode {
	return map[string]fakeNode{
		"root": {turns: 3, pre: []string{"pre"},
			branches: map[int][]fakeBranch{0: {{"agent", 2}}, 2: {{"fork-a", 0}, {"fork-b", 0}}}},
		"agent":  {turns: 2, branches: map[int][]fakeBranch{0: {{"bg", 0}}}},
		"bg":     {turns: 1, delay0: 3 * time.Millisecond},
		"pre":    {turns: 1},
		"fork-a": {turns: 2},
		"fork-b": {turns: 1},
	}
}

func TestTreeRunsBranchesAfterTheirTurnAndJoins(t *testing.T) {
	f := &fakeTree{clock: NewClock(), nodes: agentTree(), root: "root", work: time.Millisecond}
	reports, recs := runTreePhase(t, f, plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 1, Sessions: 1})
	require.Len(t, recs, 3+2+1+1+2+1, "every turn of every node of the tree")
	assert.Equal(t, 1, reports[0].Sessions, "the phase's session budget counts trees")
	n := byNode(recs)
	assert.LessOrEqual(t, n["pre"][0].ScheduledNs, n["root"][0].SentNs, "a pre-session spawn is due before the root's turn 0 is sent")
	assert.GreaterOrEqual(t, n["agent"][0].SentNs, n["root"][0].EndNs, "a spawn starts after its turn returned")
	assert.GreaterOrEqual(t, n["root"][2].SentNs, n["agent"][1].EndNs, "turn 2 joins the agent: it waits for its last turn")
	assert.GreaterOrEqual(t, n["bg"][0].ScheduledNs, n["agent"][0].EndNs+int64(3*time.Millisecond), "a branch's turn 0 is due its delay after it started")
	for _, c := range []string{"fork-a", "fork-b"} {
		assert.GreaterOrEqual(t, n[c][0].SentNs, n["root"][2].EndNs, "%s starts once the forking turn returned", c)
	}
	assert.GreaterOrEqual(t, n["fork-a"][1].SentNs, n["fork-a"][0].EndNs)
	sessions := map[int]string{}
	for _, r := range recs {
		if s, ok := sessions[r.Session]; ok {
			assert.Equal(t, s, r.Conversation, "a session number is one node's")
		}
		sessions[r.Session] = r.Conversation
	}
	assert.Len(t, sessions, 6, "each node its own session number")
	st := reports[0].Branches
	require.NotNil(t, st)
	assert.Equal(t, 5, st.ChildrenSpawned)
	assert.Equal(t, 5, st.ChildrenCompleted)
	assert.Zero(t, st.ChildrenTruncated+st.ChildrenErrored+st.JoinsSuppressed)
	assert.Equal(t, 1, st.ChildrenDelayed, "bg's turn 0 has a delay")
	assert.Equal(t, st.ParentsSuspended, st.ParentsResumed)
}

func TestTreeFreesItsSlotWithItsRootsLastTurn(t *testing.T) {
	// fork-a, of the first tree, returns only once the second root started:
	// a slot held until the whole tree ended would never let it.
	f := &fakeTree{clock: NewClock(), nodes: agentTree(), root: "root", work: time.Millisecond, hold: "fork-a",
		second: make(chan struct{})}
	reports, recs := runTreePhase(t, f, plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 1, Sessions: 2})
	require.Len(t, recs, 2*10, "the phase ends once the last tree's branches ended")
	assert.Equal(t, 2, reports[0].Sessions)
	var roots []metrics.Record // by session, each root's turns in order
	bySession := map[int][]metrics.Record{}
	for _, r := range recs {
		if r.Conversation == "root" {
			bySession[r.Session] = append(bySession[r.Session], r)
		}
	}
	require.Len(t, bySession, 2)
	for _, turns := range bySession {
		require.Len(t, turns, 3)
		roots = append(roots, turns...)
	}
	first, second := roots[:3], roots[3:]
	if second[0].SentNs < first[0].SentNs {
		first, second = second, first
	}
	assert.GreaterOrEqual(t, second[0].SentNs, first[2].EndNs, "at concurrency 1 the next root starts once the first root's last turn returned")
	for _, r := range recs {
		assert.Nil(t, r.Error, "%s turn %d", r.Conversation, r.Turn)
	}
}

func TestRequestCountCutsATree(t *testing.T) {
	f := &fakeTree{clock: NewClock(), nodes: agentTree(), root: "root", work: time.Millisecond}
	reports, recs := runTreePhase(t, f, plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 1, Requests: 4})
	assert.Len(t, recs, 4, "branches count against the request count")
	assert.Equal(t, 4, reports[0].Sent)
	st := reports[0].Branches
	require.NotNil(t, st, "the tree's branches need 7 requests: some were started")
	assert.Positive(t, st.ChildrenTruncated, "a branch stopped by the request count")
	assert.Equal(t, st.ChildrenSpawned, st.ChildrenCompleted+st.ChildrenErrored+st.ChildrenTruncated)
}

func TestSessionsWithoutBranchesReportNone(t *testing.T) {
	f := &fakeSessions{clock: NewClock(), turns: 2, work: time.Millisecond}
	reports, _ := runSessions(t, f, nil, plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 2, Sessions: 3})
	assert.Nil(t, reports[0].Branches)
}

func TestRateModeRunsTrees(t *testing.T) {
	f := &fakeTree{clock: NewClock(), nodes: agentTree(), root: "root", work: time.Millisecond}
	reports, recs := runTreePhase(t, f, plan.Phase{Name: "p", Kind: plan.KindProfiling, Rate: 200, RateMode: plan.RateConstant, Sessions: 2})
	require.Len(t, recs, 2*10)
	n := byNode(recs)
	assert.Len(t, n, 6)
	for _, r := range recs {
		if r.Conversation == "root" && r.Turn == 0 {
			assert.Zero(t, (r.ScheduledNs-reports[0].StartNs)%int64(5*time.Millisecond), "a root's first turn on the rate's ticks")
		}
	}
}

// The request count reached by a root's only turn: the branches it starts
// are counted, and cut, before the phase reports (a root counted among the
// branches until it returns, so the drain cannot miss them).
func TestBranchesOfTheLastRequestAreCounted(t *testing.T) {
	nodes := map[string]fakeNode{
		"root": {turns: 1, branches: map[int][]fakeBranch{0: {{"a", 0}, {"b", 0}}}},
		"a":    {turns: 1}, "b": {turns: 1},
	}
	for range 20 {
		f := &fakeTree{clock: NewClock(), nodes: nodes, root: "root"}
		reports, recs := runTreePhase(t, f, plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 1, Requests: 1})
		require.Len(t, recs, 1)
		require.NotNil(t, reports[0].Branches, "the branches the last request started")
		assert.Equal(t, metrics.BranchStats{ChildrenSpawned: 2, ChildrenTruncated: 2}, *reports[0].Branches)
	}
}

// An orchestrator's spine: three silent turns, each round's spawns joined
// at the next, which is due its delay after they ended. It sends nothing
// itself, and holds its slot until its last round has joined.
func TestSilentTurnsRunRounds(t *testing.T) {
	nodes := map[string]fakeNode{
		"spine": {turns: 3, silent: true, delay: 3 * time.Millisecond,
			branches: map[int][]fakeBranch{0: {{"a", 1}, {"b", 1}}, 1: {{"c", 2}}}},
		"a": {turns: 1}, "b": {turns: 2}, "c": {turns: 1},
	}
	f := &fakeTree{clock: NewClock(), nodes: nodes, root: "spine", work: time.Millisecond}
	reports, recs := runTreePhase(t, f, plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 1, Sessions: 2})
	require.Len(t, recs, 2*4, "the rounds' requests only")
	assert.Equal(t, 8, reports[0].Sent, "a silent turn takes no credit")
	st := reports[0].Branches
	require.NotNil(t, st)
	assert.Equal(t, metrics.BranchStats{ChildrenSpawned: 6, ChildrenCompleted: 6, ParentsSuspended: st.ParentsSuspended,
		ParentsResumed: st.ParentsSuspended}, *st)
	// At concurrency 1 the trees run one after the other: in send order,
	// each tree's a and b (round 0) come before its c (round 1), which
	// waits for both and the think time; the next tree's round 0 waits for
	// the first tree's c.
	slices.SortFunc(recs, func(x, y metrics.Record) int { return cmp.Compare(x.SentNs, y.SentNs) })
	var round0End, prevEnd int64
	for _, r := range recs {
		require.NotEqual(t, "spine", r.Conversation)
		switch r.Conversation {
		case "c":
			assert.GreaterOrEqual(t, r.ScheduledNs, round0End+int64(3*time.Millisecond), "round 1 waits for round 0 and the think time")
			prevEnd, round0End = r.EndNs, 0
		default:
			assert.GreaterOrEqual(t, r.SentNs, prevEnd, "a spine holds its slot until its last round joined")
			round0End = max(round0End, r.EndNs)
		}
	}
}

// A turn cut in flight by the phase's end starts nothing, and a branch cut
// in flight on its last turn is truncated, not errored.
func TestCutTurnsStartNothing(t *testing.T) {
	cut := plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 1, Duration: 0.5, GracePeriod: 0}
	f := &fakeTree{clock: NewClock(), root: "root", nodes: map[string]fakeNode{
		"root": {turns: 1, slow: true, branches: map[int][]fakeBranch{0: {{"a", 0}}}}, "a": {turns: 1}}}
	reports, recs := runTreePhase(t, f, cut)
	require.Len(t, recs, 1)
	assert.True(t, recs[0].Cancelled)
	assert.Nil(t, reports[0].Branches, "the cut root started no branch")

	// The branch is cut by an interrupt once it is in flight (not by a
	// duration the root's request would have to beat).
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	f = &fakeTree{clock: NewClock(), root: "root", slowSent: interrupt, nodes: map[string]fakeNode{
		"root": {turns: 1, branches: map[int][]fakeBranch{0: {{"a", 0}}}}, "a": {turns: 1, slow: true}}}
	e := &Engine{Clock: f.clock, Source: f}
	reports, err := e.Run(ctx, []plan.Phase{{Name: "p", Kind: plan.KindProfiling, Concurrency: 1, Sessions: 1}})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, reports[0].Branches)
	assert.Equal(t, 1, reports[0].Branches.ChildrenSpawned)
	assert.Equal(t, 1, reports[0].Branches.ChildrenTruncated, "cut in flight")
	assert.Zero(t, reports[0].Branches.ChildrenErrored)
}

// Once the request count is reached, an orchestrator stops between rounds
// (its next round could send nothing), in both modes: its think time of
// an hour is never waited out. The rate is one root a second: a silent
// root claims no request, so at a rate whose next root came before the
// first child's claim (a busy machine's milliseconds) that root would
// start a child too.
func TestSilentRoundsStopAtTheRequestCount(t *testing.T) {
	nodes := map[string]fakeNode{
		"spine": {turns: 4, silent: true, delay: time.Hour,
			branches: map[int][]fakeBranch{0: {{"a", 1}}, 1: {{"a", 2}}, 2: {{"a", 3}}}},
		"a": {turns: 2},
	}
	for _, ph := range []plan.Phase{
		{Name: "p", Kind: plan.KindProfiling, Concurrency: 1, Requests: 1},
		{Name: "p", Kind: plan.KindProfiling, Rate: 1, RateMode: plan.RateConstant, Requests: 1},
	} {
		f := &fakeTree{clock: NewClock(), nodes: nodes, root: "spine", work: time.Millisecond}
		reports, recs := runTreePhase(t, f, ph)
		require.Len(t, recs, 1)
		st := reports[0].Branches
		require.NotNil(t, st)
		assert.Equal(t, 1, st.ChildrenSpawned, "no round after the count was reached")
		assert.Equal(t, 1, st.ChildrenTruncated, "a's second turn could not be sent")
	}
}

// A root's turn 0 holds its credit before its pre-session spawns start:
// the request count's last credit is the root's, not its spawn's.
func TestPreSpawnsFollowTheRootsCredit(t *testing.T) {
	nodes := map[string]fakeNode{"root": {turns: 1, pre: []string{"pre"}}, "pre": {turns: 1}}
	for range 20 {
		f := &fakeTree{clock: NewClock(), nodes: nodes, root: "root", work: time.Millisecond}
		_, recs := runTreePhase(t, f, plan.Phase{Name: "p", Kind: plan.KindProfiling, Concurrency: 1, Requests: 1})
		require.Len(t, recs, 1)
		assert.Equal(t, "root", recs[0].Conversation)
	}
}
