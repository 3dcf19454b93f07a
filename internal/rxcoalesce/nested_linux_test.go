package rxcoalesce

import (
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkSenderCostOfAWatchedSet measures what a receiver's epoll set
// costs the sender of each small write on loopback, where the receive runs
// in the sender's context: the writing thread's own CPU time per write
// (cpu-ns/write), with the receiving socket in an epoll set that no other
// set watches (alone) and in one that another set watches (watched), as
// the runtime's poller watched the poller's set before it registered the
// set only while waiting. The reader drains the socket every 20 µs, as the
// poller does while it coalesces. On two CPUs each thread gets one of its
// own. Compare the two in one run (-count 6 alternates nothing: run it a
// few times).
func BenchmarkSenderCostOfAWatchedSet(b *testing.B) {
	for _, watch := range []bool{false, true} {
		name := "alone"
		if watch {
			name = "watched"
		}
		b.Run(name, func(b *testing.B) { senderCost(b, watch) })
	}
}

func senderCost(b *testing.B, watch bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	w, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	r, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	fd, err := detach(r.(*net.TCPConn))
	if err != nil {
		b.Fatal(err)
	}
	defer syscall.Close(fd)
	stop := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		drainEvery(fd, watch, stop)
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pinThread(0)
	msg := make([]byte, 120)
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	start := ts.Nano()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := w.Write(msg); err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 {
			time.Sleep(50 * time.Microsecond) // a reply's worth, then a pause
		}
	}
	b.StopTimer()
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	b.ReportMetric(float64(ts.Nano()-start)/float64(b.N), "cpu-ns/write")
	close(stop)
	<-drained
}

// detach returns a duplicate of c's descriptor and closes c, which takes
// the socket out of the runtime's poller, as adopt does.
func detach(c *net.TCPConn) (int, error) {
	fd, err := dupOf(c)
	if err == nil {
		c.Close()
	}
	return fd, err
}

// drainEvery reads what the socket fd holds every 20 µs, looking at its
// epoll set first, on CPU 1; watch puts that set in another set, as a
// nested registration does.
func drainEvery(fd int, watch bool, stop chan struct{}) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pinThread(1)
	inner, _ := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	outer, _ := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	defer syscall.Close(inner)
	defer syscall.Close(outer)
	_ = syscall.EpollCtl(inner, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: edgeIn, Fd: int32(fd)})
	if watch {
		_ = syscall.EpollCtl(outer, syscall.EPOLL_CTL_ADD, inner, &syscall.EpollEvent{Events: syscall.EPOLLIN | unix.EPOLLET, Fd: int32(inner)})
	}
	buf := make([]byte, 32<<10)
	events := make([]syscall.EpollEvent, 8)
	for k := 0; ; k++ {
		select {
		case <-stop:
			return
		default:
		}
		sleep(20 * time.Microsecond)
		if n, _ := syscall.EpollWait(inner, events, 0); n > 0 {
			for {
				if n, err := syscall.Read(fd, buf); n <= 0 || err != nil {
					break
				}
			}
		}
		if watch && k%64 == 0 {
			_, _ = syscall.EpollWait(outer, events, 0) // as the runtime looks at its own now and then
		}
	}
}

// pinThread binds the calling thread to cpu, where there is one.
func pinThread(cpu int) {
	if runtime.NumCPU() < 2 {
		return
	}
	var set unix.CPUSet
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set)
}
