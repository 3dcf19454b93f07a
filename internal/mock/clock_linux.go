package mock

import (
	"math"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Futex operations (linux/futex.h).
const (
	futexWaitBitsetPrivate = 9 | 128 // FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG: absolute CLOCK_MONOTONIC timeout
	futexWakePrivate       = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
	futexBitsetMatchAny    = 0xffffffff
)

// osClock is how the clock's goroutine sleeps on Linux: on a thread of its
// own with a timer slack of 1 ns (the default 50 µs lets the kernel wake it
// that late), in futex waits with absolute deadlines that another
// goroutine can cut short by bumping the futex word.
type osClock struct {
	offset int64 // CLOCK_MONOTONIC minus nanotime
}

func newOSClock() *osClock { return &osClock{} }

// setup locks the calling goroutine to its thread for good (the thread is
// discarded when the goroutine exits, slack and all), sets the thread's
// timer slack and reads the offset of CLOCK_MONOTONIC. It returns the mode
// GET /mock/timing reports.
func (o *osClock) setup() string {
	runtime.LockOSThread()
	o.offset = monotonicOffset()
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
		return "thread (timer slack not set: " + err.Error() + ")"
	}
	return "thread"
}

// monotonicOffset returns CLOCK_MONOTONIC minus nanotime, from the
// tightest of a few bracketing reads. Go's monotonic clock is
// CLOCK_MONOTONIC, so the offset is constant.
func monotonicOffset() int64 {
	best, off := int64(math.MaxInt64), int64(0)
	for range 16 {
		var ts unix.Timespec
		a := nanotime()
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
			continue
		}
		b := nanotime()
		if b-a < best {
			best, off = b-a, ts.Nano()-(a+b)/2
		}
	}
	return off
}

// sleep waits until nanotime reaches until (noDeadline: no timeout), or
// word no longer holds seq, or a wake or signal cuts it short.
func (o *osClock) sleep(word *atomic.Uint32, seq uint32, until int64) {
	var ts *syscall.Timespec
	if until != noDeadline {
		t := syscall.NsecToTimespec(until + o.offset)
		ts = &t
	}
	// A blocking syscall: the runtime lets other goroutines have this
	// thread's P while it sleeps.
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWaitBitsetPrivate,
		uintptr(seq), uintptr(unsafe.Pointer(ts)), 0, futexBitsetMatchAny)
}

// wake cuts short a sleep on word (whose value the caller has changed).
func (o *osClock) wake(word *atomic.Uint32) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWakePrivate, 1)
}
