package mock

import (
	"context"
	"slices"
	"sync"
)

// scheduler admits requests to generation: all at once, or under
// --max-num-seqs at most limit, the others waiting in arrival order. It
// counts both for vllm:num_requests_running and vllm:num_requests_waiting.
type scheduler struct {
	limit int // 0: no limit

	mu      sync.Mutex
	running int
	queue   []*waiter // FIFO
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
	if q.limit == 0 || q.running < q.limit && len(q.queue) == 0 {
		q.running++
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
		q.running--
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
	return q.running, len(q.queue)
}
