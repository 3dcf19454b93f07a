package mock

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// scheduler admits requests to generation: all at once, or under
// --max-num-seqs at most limit, the others waiting in arrival order. It
// counts both for vllm:num_requests_running and vllm:num_requests_waiting,
// and the running ones for the batch-priced steps of the latency model.
type scheduler struct {
	limit int // 0: no limit

	mu      sync.Mutex
	running atomic.Int64 // changed only under mu; read without it by live
	queue   []*waiter    // FIFO
}

// waiter is a request waiting for a slot; release hands it one by closing
// ready.
type waiter struct {
	ready    chan struct{}
	admitted bool
}

// acquire takes a generation slot, waiting its turn when all are busy. It
// reports false, holding nothing, if ctx ends first, and whether it had to
// wait.
func (q *scheduler) acquire(ctx context.Context) (ok, waited bool) {
	q.mu.Lock()
	if q.limit == 0 || q.running.Load() < int64(q.limit) && len(q.queue) == 0 {
		q.running.Add(1)
		q.mu.Unlock()
		return true, false
	}
	w := &waiter{ready: make(chan struct{})}
	q.queue = append(q.queue, w)
	q.mu.Unlock()
	select {
	case <-w.ready:
		return true, true
	case <-ctx.Done():
	}
	q.mu.Lock()
	if w.admitted { // the slot came as ctx ended: pass it on
		q.mu.Unlock()
		q.release()
		return false, true
	}
	q.queue = slices.DeleteFunc(q.queue, func(o *waiter) bool { return o == w })
	q.mu.Unlock()
	return false, true
}

// release gives a slot back, to the longest waiting request if any.
func (q *scheduler) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.running.Add(-1)
		return
	}
	w := q.queue[0]
	q.queue[0] = nil
	q.queue = q.queue[1:]
	w.admitted = true
	close(w.ready)
}

// counts returns the requests generating and waiting now.
func (q *scheduler) counts() (running, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return int(q.running.Load()), len(q.queue)
}

// live returns the requests generating now, without taking the lock: the
// batch size n of the latency model's steps.
func (q *scheduler) live() int { return int(q.running.Load()) }
