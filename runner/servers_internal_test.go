package runner

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// urlSweep has one cell per url, in order, two trials each.
func urlSweep(urls ...string) plan.Sweep {
	sw := plan.Sweep{Name: "lanes", Trials: 2}
	for i, u := range urls {
		p := plan.NewProfile()
		p.Model, p.URL = []string{"m"}, []string{u}
		params := []plan.Param{{Name: "concurrency", Value: i + 1}}
		sw.Cells = append(sw.Cells, plan.Cell{ID: plan.CellID(sw.Name, params), Label: plan.CellLabel(params),
			Index: i, Params: params, Profile: p})
	}
	return sw
}

// fakeLookup resolves the names of addrs; any other name fails.
func fakeLookup(addrs map[string][]string) lookupFunc {
	return func(_ context.Context, host string) ([]net.IPAddr, error) {
		ips, ok := addrs[host]
		if !ok {
			return nil, errors.New("no such host")
		}
		var out []net.IPAddr
		for _, ip := range ips {
			out = append(out, net.IPAddr{IP: net.ParseIP(ip)})
		}
		return out, nil
	}
}

func laneCells(lanes []plan.Lane) [][]string {
	var out [][]string
	for _, l := range lanes {
		out = append(out, l.Cells)
	}
	return out
}

// TestServerLanesMergeOneMachine: 0.0.0.0 and [::] reach this machine's
// loopback as 127.0.0.1 and localhost do, and a name is one server with
// the addresses it resolves to: their cells share a lane, its trials in
// plan order. Different machines keep their lanes; a name that does not
// resolve keeps its own, and a note says so.
func TestServerLanesMergeOneMachine(t *testing.T) {
	t.Parallel()
	sw := urlSweep("http://127.0.0.1:8000", "http://gpu-b:8000", "http://0.0.0.0:8000", "http://[::]:8000",
		"http://myhost:8000", "http://gpu-b-alias:8000", "http://nowhere:8000", "http://0.0.0.0:9000")
	lookup := fakeLookup(map[string][]string{"myhost": {"127.0.1.1"}, "gpu-b": {"10.0.0.2"}, "gpu-b-alias": {"10.0.0.2", "10.0.0.3"}})
	lanes, ids, notes := serverLanes(context.Background(), sw, lookup)
	require.Len(t, lanes, 4, "%v", laneCells(lanes))
	assert.Equal(t, [][]string{
		{"concurrency_1", "concurrency_3", "concurrency_4", "concurrency_5"}, // loopback :8000
		{"concurrency_2", "concurrency_6"},                                   // 10.0.0.2
		{"concurrency_7"},                                                    // unresolved
		{"concurrency_8"},                                                    // loopback, another port
	}, laneCells(lanes))
	var numbers []int
	for _, tr := range lanes[0].Trials {
		numbers = append(numbers, tr.Cell.Index*10+tr.Number)
	}
	assert.Equal(t, []int{1, 2, 21, 22, 31, 32, 41, 42}, numbers, "plan order within the merged lane")
	assert.Contains(t, notes, "host nowhere did not resolve within 2s (no such host): its cells' lane is kept by the name's spelling")
	assert.Contains(t, notes[len(notes)-1], "reach one server")
	assert.True(t, ids.meet([]string{"http://localhost:8000"}, []string{"http://myhost:8000"}))
	assert.False(t, ids.meet([]string{"http://localhost:8000"}, []string{"http://localhost:9000"}))

	// --parallel 1 looks nothing up: one lane, no note.
	one, _, notes := lanesFor(context.Background(), sw, 1, func(context.Context, string) ([]net.IPAddr, error) {
		t.Error("looked up a name with --parallel 1")
		return nil, errors.New("no")
	})
	assert.Len(t, one, 1)
	assert.Empty(t, notes)
}

// TestServerLanesLookupIsBounded: a resolver that never answers is given
// up on at one deadline, ResolveTimeout away, shared by every lookup, and
// its names keep their lanes.
func TestServerLanesLookupIsBounded(t *testing.T) {
	t.Parallel()
	sw := urlSweep("http://slow-a:1", "http://slow-b:1")
	var mu sync.Mutex
	var deadlines []time.Time
	before := time.Now()
	lanes, _, notes := serverLanes(context.Background(), sw, func(ctx context.Context, _ string) ([]net.IPAddr, error) {
		d, ok := ctx.Deadline()
		require.True(t, ok, "the lookups are bounded")
		mu.Lock()
		deadlines = append(deadlines, d)
		mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	require.Len(t, deadlines, 2)
	assert.Equal(t, deadlines[0], deadlines[1], "the lookups share one bound")
	assert.False(t, deadlines[0].Before(before.Add(ResolveTimeout)), "ResolveTimeout after the lookups began, not sooner")
	assert.Len(t, lanes, 2)
	assert.Len(t, notes, 2)
}

// TestUnansweredResets: a reset that got no answer may still run; one
// refused, answered, or never connected does not.
func TestUnansweredResets(t *testing.T) {
	t.Parallel()
	sw := urlSweep("http://0.0.0.0:8000", "http://127.0.0.1:8000", "http://127.0.0.1:9000")
	s := &sweepRun{}
	_, s.ids, _ = serverLanes(context.Background(), sw, noLookup)
	tr := plan.Trial{Cell: sw.Cells[0], Number: 1}
	tr.Cell.Profile.ResetKVCacheTimeoutSeconds = plan.Ptr(1.0)
	run := &result.Run{ControlHooks: []hooks.Call{
		{Hook: hooks.HookReset, Origin: "http://0.0.0.0:8000", Error: "no answer within 1s: context deadline exceeded",
			StartedAt: time.Now().UnixNano(), DurationMs: 1000, Unanswered: 1, UnansweredAt: time.Now().UnixNano()},
		{Hook: hooks.HookReset, Origin: "http://0.0.0.0:8000", Status: 503, Error: "status 503"},
		// Its first attempt got no answer, its second a 500: the first may still run.
		{Hook: hooks.HookReset, Origin: "http://127.0.0.1:9000", Status: 500, Error: "status 500", Attempts: 2,
			Unanswered: 1, UnansweredAt: time.Now().UnixNano()},
		{Hook: hooks.HookReset, Origin: "http://0.0.0.0:8000", Error: "dial tcp 0.0.0.0:8000: connect: connection refused"},
		{Hook: hooks.HookReset, Origin: "http://0.0.0.0:8000", Status: 200, OK: true},
		{Hook: hooks.HookProfilerStart, Origin: "http://0.0.0.0:8000", Error: "no answer within 1s"},
	}}
	late := s.unanswered(tr, run)
	require.Len(t, late, 2)
	assert.Equal(t, "http://127.0.0.1:9000", late[1].origin, "an earlier attempt left unanswered counts, not only the last")
	late = late[:1]
	assert.Equal(t, time.Second, late[0].timeout)
	assert.Equal(t, LateResetGrace, late[0].grace())
	assert.Greater(t, graceLeft(late), LateResetGrace/2)
	assert.Equal(t, "the previous trial's reset of http://0.0.0.0:8000 (concurrency_1 trial 1) got no answer within 1s", late[0].describe())

	other, rest := s.lateOn(late, plan.Trial{Cell: sw.Cells[2], Number: 1})
	assert.Empty(t, other, "another port is another server")
	under, rest := s.lateOn(rest, plan.Trial{Cell: sw.Cells[1], Number: 1})
	assert.Len(t, under, 1, "127.0.0.1 is the server 0.0.0.0 reached")
	assert.Empty(t, rest, "it warns the next trial on that server only")
}
