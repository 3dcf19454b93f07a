package bench

import (
	"context"
	"sync"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// joins holds a turn back until the sessions it waits for (its
// dataset.Turn.Join: a weka_trace's subagents, which the main agent's next
// call waits for, AIPerf's SPAWN_JOIN) have sent their last turn. Per
// phase, each conversation has a channel, closed when its session ends.
//
// It is used only where every session of the schedule starts on its own
// time, whatever the others do: a fixed schedule without a concurrency cap,
// in one process (a cap's slot held by a waiting parent could starve its
// subagent; another worker's subagent is not seen here). A wait ends with
// the phase too.
type joins struct {
	mu     sync.Mutex
	done   map[joinKey]chan struct{}
	closed map[joinKey]bool
}

type joinKey struct {
	phase string
	conv  int
}

func newJoins() *joins {
	return &joins{done: map[joinKey]chan struct{}{}, closed: map[joinKey]bool{}}
}

// joinable reports whether ph's sessions may wait for one another.
func joinable(ph *plan.Phase) bool { return ph != nil && ph.Fixed && ph.Concurrency == 0 }

func (j *joins) ch(k joinKey) chan struct{} {
	c := j.done[k]
	if c == nil {
		c = make(chan struct{})
		j.done[k] = c
	}
	return c
}

// finish marks conversation conv's session of phase as ended.
func (j *joins) finish(phase string, conv int) {
	if j == nil {
		return
	}
	k := joinKey{phase, conv}
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.closed[k] {
		j.closed[k] = true
		close(j.ch(k))
	}
}

// wait returns once every one of convs' sessions of phase has ended, or
// ctx has.
func (j *joins) wait(ctx context.Context, phase string, convs []int) {
	for _, conv := range convs {
		j.mu.Lock()
		c := j.ch(joinKey{phase, conv})
		j.mu.Unlock()
		select {
		case <-c:
		case <-ctx.Done():
			return
		}
	}
}
