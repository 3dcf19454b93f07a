// Package selfcheck measures whether the client process could keep up with
// the load it drove, from what the client itself controls: how long its
// goroutines waited to run (the Go scheduler's latency histogram, read from
// runtime/metrics), how much CPU the process used against the cores it may
// use (getrusage), and how busy the whole host was (/proc/stat, Linux only).
//
// A goroutine that reads a response chunk stamps it when it runs, not when
// the bytes arrived: scheduler latency is the delay every timestamp of the
// run may carry. A Window over the profiling phases is the evidence behind
// the CLIENT-BOUND flag.
package selfcheck

import (
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const schedMetric = "/sched/latencies:seconds"

// Snapshot is the process's counters at one instant.
type Snapshot struct {
	at        time.Time
	sched     []uint64 // cumulative counts per bucket
	buckets   []float64
	cpu       time.Duration // user + system time of the process
	hostBusy  uint64        // host CPU ticks not idle (0 without /proc/stat)
	hostTotal uint64
}

// Take reads the counters now.
func Take() Snapshot {
	s := []metrics.Sample{{Name: schedMetric}}
	metrics.Read(s)
	snap := Snapshot{at: time.Now(), cpu: processCPU()}
	if s[0].Value.Kind() == metrics.KindFloat64Histogram {
		h := s[0].Value.Float64Histogram()
		snap.sched, snap.buckets = append([]uint64(nil), h.Counts...), h.Buckets
	}
	snap.hostBusy, snap.hostTotal = hostTicks()
	return snap
}

// Window accumulates the deltas between pairs of snapshots (one pair per
// profiling phase).
type Window struct {
	wall      time.Duration
	cpu       time.Duration
	sched     []uint64
	buckets   []float64
	hostBusy  uint64
	hostTotal uint64
}

// Add adds the interval from a to b.
func (w *Window) Add(a, b Snapshot) {
	w.wall += b.at.Sub(a.at)
	w.cpu += b.cpu - a.cpu
	if len(a.sched) == len(b.sched) && len(b.sched) > 0 {
		if w.sched == nil {
			w.sched, w.buckets = make([]uint64, len(b.sched)), b.buckets
		}
		for i := range b.sched {
			w.sched[i] += b.sched[i] - a.sched[i]
		}
	}
	if a.hostTotal > 0 && b.hostTotal > a.hostTotal {
		w.hostBusy += b.hostBusy - a.hostBusy
		w.hostTotal += b.hostTotal - a.hostTotal
	}
}

// Report is what a Window says.
type Report struct {
	// SchedP50, SchedP99 and SchedMax are quantiles of how long runnable
	// goroutines waited for a thread (upper bucket bounds: a slight
	// overestimate), in ms; NaN without samples.
	SchedP50, SchedP99, SchedMax float64
	// ProcessCPU is the process's CPU time over the window's wall time and
	// the cores it may use (GOMAXPROCS), in percent.
	ProcessCPU float64
	Cores      int
	// HostCPU is the share of the host's CPU time that was not idle, in
	// percent; NaN where /proc/stat is unavailable, or over a window of
	// fewer than minHostTicks clock ticks in all (a run of a few ms: one
	// tick would read 100%).
	HostCPU float64
}

// minHostTicks is the fewest clock ticks of /proc/stat (all CPUs) a
// window needs for its host CPU share: a hundred resolve it to 1%.
const minHostTicks = 100

// Report summarises the window.
func (w *Window) Report() Report {
	r := Report{SchedP50: math.NaN(), SchedP99: math.NaN(), SchedMax: math.NaN(), HostCPU: math.NaN(),
		Cores: runtime.GOMAXPROCS(0)}
	if w.wall > 0 {
		r.ProcessCPU = 100 * float64(w.cpu) / float64(w.wall) / float64(r.Cores)
	}
	if w.hostTotal >= minHostTicks {
		r.HostCPU = 100 * float64(w.hostBusy) / float64(w.hostTotal)
	}
	var total uint64
	for _, c := range w.sched {
		total += c
	}
	if total == 0 {
		return r
	}
	r.SchedP50, r.SchedP99 = 1e3*w.quantile(0.5, total), 1e3*w.quantile(0.99, total)
	for i := len(w.sched) - 1; i >= 0; i-- {
		if w.sched[i] > 0 {
			r.SchedMax = 1e3 * upper(w.buckets, i)
			break
		}
	}
	return r
}

// quantile is the upper bound of the bucket holding rank q·total.
func (w *Window) quantile(q float64, total uint64) float64 {
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, c := range w.sched {
		if seen += c; seen >= rank {
			return upper(w.buckets, i)
		}
	}
	return upper(w.buckets, len(w.sched)-1)
}

// upper is bucket i's upper bound; the last, unbounded bucket reports its
// lower bound.
func upper(buckets []float64, i int) float64 {
	if hi := buckets[i+1]; !math.IsInf(hi, 1) {
		return hi
	}
	return buckets[i]
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hostTicks reads the aggregate cpu line of /proc/stat: busy and total
// ticks (idle and iowait are not busy; steal, time the hypervisor gave
// others, is); zeros when unavailable.
func hostTicks() (busy, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0
		}
		if i == 8 { // guest time is already in user time
			break
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}
