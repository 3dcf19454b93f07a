package mock

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// clock releases waiters at absolute deadlines from one dedicated
// goroutine, so a stream's chunks are paced by a timer precise to
// microseconds rather than by Go's timers, which fire about half a
// millisecond late (up to one) on Linux, where Go sleeps in epoll with
// millisecond timeouts. One clock serves every stream of the process:
// deadlines wait in a min-heap, and the clock's goroutine sleeps until
// just before the earliest (on Linux in a futex wait with an absolute
// CLOCK_MONOTONIC timeout, on a thread of its own with a timer slack of
// 1 ns), spins the last few microseconds while its spin budget lasts, then
// hands every due waiter its tick. How far ahead it wakes adapts to how
// late the kernel wakes it, and spinning is capped at 1/spinShare of one
// core, so thousands of concurrent streams cost one thread and no
// per-stream timers.
//
// On a loaded 2-core VM the ticks go out within a microsecond of their
// deadlines (p50); a waiter resumes some 20–40 µs later, the Go
// scheduler's latency to run it. The price is about one context switch
// per release when releases are tens of microseconds apart (Go's timers
// batch them a millisecond at a time); BenchmarkClock measures both.
// GET /mock/timing reports what the streams actually wrote.
type clock struct {
	mu      sync.Mutex
	alarms  []alarm // a min-heap by at
	stopped bool

	// target is the deadline the clock's goroutine is heading for
	// (noDeadline: none); an earlier alarm lowers it and wakes the goroutine.
	target atomic.Int64
	// word is the futex word the goroutine sleeps on: bumped to wake it.
	word atomic.Uint32
	sys  *osClock
	mode string        // how it sleeps, for GET /mock/timing
	done chan struct{} // closed when the goroutine has exited

	// The goroutine's own state.
	lead   int64 // how long before a deadline it wakes, tracking the kernel's wake-up lateness
	credit int64 // spin budget left, nanoseconds
	earned int64 // when credit was last topped up
}

// alarm is one waiter's deadline.
type alarm struct {
	at   int64         // nanoseconds since clockEpoch
	tick chan struct{} // capacity 1; gets one value when at has passed
}

// Tuning of the clock's goroutine.
const (
	noDeadline = math.MaxInt64
	initLead   = 50 * int64(time.Microsecond)
	minLead    = 2 * int64(time.Microsecond)
	maxLead    = 250 * int64(time.Microsecond)
	leadStep   = 250 // nanoseconds; lead moves 3 steps up per late wake, 1 down per early one (its 75th percentile)
	spinShare  = 10  // spinning may use 1/spinShare of one core
	maxCredit  = 2 * int64(time.Millisecond)
)

// clockEpoch is the origin of alarm times, read on Go's monotonic clock.
var clockEpoch = time.Now()

// nanotime returns the monotonic nanoseconds since clockEpoch.
func nanotime() int64 { return int64(time.Since(clockEpoch)) }

// sharedClock is the process's clock, started on first use. It runs for
// the life of the process: with no deadlines pending it sleeps without a
// timeout and costs nothing.
var sharedClock = sync.OnceValue(startClock)

// startClock starts a clock's goroutine and returns once it is ready.
func startClock() *clock {
	c := &clock{sys: newOSClock(), done: make(chan struct{}), lead: initLead}
	c.target.Store(noDeadline)
	ready := make(chan string)
	go c.run(ready)
	c.mode = <-ready
	return c
}

// stop ends the clock's goroutine (tests and benchmarks; nothing may be
// waiting on it).
func (c *clock) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.word.Add(1)
	c.sys.wake(&c.word)
	<-c.done
}

// wait blocks until deadline has passed or ctx ends; it reports whether the
// deadline passed first. tick is the caller's channel of capacity 1, empty,
// reused from one wait to the next; after a wait that reports false it may
// still receive its tick, so it must not be reused then.
func (c *clock) wait(ctx context.Context, deadline time.Time, tick chan struct{}) bool {
	at := int64(deadline.Sub(clockEpoch))
	if at <= nanotime() {
		return ctx.Err() == nil
	}
	c.add(at, tick)
	select {
	case <-tick:
		return true
	case <-ctx.Done():
		return false
	}
}

// add queues an alarm, waking the clock's goroutine when it is the
// earliest.
func (c *clock) add(at int64, tick chan struct{}) {
	c.mu.Lock()
	c.push(alarm{at: at, tick: tick})
	earlier := at < c.target.Load()
	if earlier {
		c.target.Store(at)
		c.word.Add(1)
	}
	c.mu.Unlock()
	if earlier {
		c.sys.wake(&c.word)
	}
}

// run is the clock's goroutine: it prepares its thread, reports how it
// sleeps on ready, then releases due alarms and waits for the next, until
// stopped.
func (c *clock) run(ready chan<- string) {
	defer close(c.done)
	ready <- c.sys.setup()
	c.earned = nanotime()
	for {
		c.mu.Lock()
		if c.stopped {
			c.mu.Unlock()
			return
		}
		now := nanotime()
		for len(c.alarms) > 0 && c.alarms[0].at <= now {
			a := c.pop()
			select {
			case a.tick <- struct{}{}:
			default: // a waiter that gave up and left its tick unread
			}
		}
		next := int64(noDeadline)
		if len(c.alarms) > 0 {
			next = c.alarms[0].at
		}
		c.target.Store(next)
		seq := c.word.Load()
		c.mu.Unlock()
		c.approach(now, next, seq)
	}
}

// approach waits for next, the earliest deadline as of futex sequence seq.
// With spin budget for it, it sleeps until lead before next and spins the
// rest; without, it sleeps until next. It returns early when woken before
// its wake-up time (an earlier alarm, a signal), for run to re-plan.
func (c *clock) approach(now, next int64, seq uint32) {
	c.credit = min(maxCredit, c.credit+(now-c.earned)/spinShare)
	c.earned = now
	wake := next
	if next != noDeadline && c.credit >= c.lead {
		wake = next - c.lead
	}
	if wake > now {
		c.sys.sleep(&c.word, seq, wake)
		now = nanotime()
		if now < wake {
			return
		}
		if now-wake > c.lead { // learn how late the kernel wakes us
			c.lead = min(maxLead, c.lead+3*leadStep)
		} else {
			c.lead = max(minLead, c.lead-leadStep)
		}
	}
	began := now
	for now < c.target.Load() && now-began < c.credit {
		now = nanotime()
	}
	c.credit -= now - began
}

// push adds a to the heap.
func (c *clock) push(a alarm) {
	c.alarms = append(c.alarms, a)
	h := c.alarms
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].at <= h[i].at {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

// pop removes and returns the earliest alarm.
func (c *clock) pop() alarm {
	h := c.alarms
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = alarm{}
	h = h[:n]
	for i := 0; ; {
		l, least := 2*i+1, i
		if l < n && h[l].at < h[least].at {
			least = l
		}
		if r := l + 1; r < n && h[r].at < h[least].at {
			least = r
		}
		if least == i {
			break
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
	c.alarms = h
	return top
}
