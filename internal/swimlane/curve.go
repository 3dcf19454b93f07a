package swimlane

import "slices"

// Step is a step of a step function: its value V from T (ns) until the
// next step's T. Before the first step the value is 0.
type Step struct {
	T int64
	V int32
}

// Concurrency is the exact number of spans in flight, [start, end) each,
// as a step at every time the number changes; at a time where spans end
// and others start, the ends count first, as AIPerf's sweep line. Every
// end must be at or after its start, and the spans within 2^61 ns of each
// other. The sweep sorts the 2n events once, then is linear.
func Concurrency(starts, ends []int64) []Step {
	return sweep(len(starts), func(i int) (int64, int64) { return starts[i], ends[i] })
}

// sweep is Concurrency over n spans given by span.
func sweep(n int, span func(int) (int64, int64)) []Step {
	if n == 0 {
		return nil
	}
	t0, _ := span(0)
	for i := 1; i < n; i++ {
		s, _ := span(i)
		t0 = min(t0, s)
	}
	// An event is its time from t0, shifted, with the low bit 1 for a
	// start: sorted, the ends at a time come before its starts.
	ev := make([]int64, 0, 2*n)
	for i := range n {
		s, e := span(i)
		ev = append(ev, (s-t0)<<1|1, (e-t0)<<1)
	}
	slices.Sort(ev)
	out := make([]Step, 0, n)
	var cur int32
	for i, e := range ev {
		if e&1 == 1 {
			cur++
		} else {
			cur--
		}
		t := e >> 1
		if i+1 < len(ev) && ev[i+1]>>1 == t {
			continue // the other events at t first
		}
		if len(out) == 0 || out[len(out)-1].V != cur {
			out = append(out, Step{T: t0 + t, V: cur})
		}
	}
	return out
}

// Subtract is a - b at every time, at least 0: the idle sessions are the
// sessions alive (first start to last end) less the requests in flight.
func Subtract(a, b []Step) []Step {
	out := make([]Step, 0, max(len(a), len(b)))
	var va, vb int32
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var t int64
		switch {
		case j >= len(b) || (i < len(a) && a[i].T < b[j].T):
			t = a[i].T
		default:
			t = b[j].T
		}
		for i < len(a) && a[i].T == t {
			va = a[i].V
			i++
		}
		for j < len(b) && b[j].T == t {
			vb = b[j].V
			j++
		}
		v := max(va-vb, 0)
		if (len(out) == 0 && v != 0) || (len(out) > 0 && out[len(out)-1].V != v) {
			out = append(out, Step{T: t, V: v})
		}
	}
	return out
}

// Peak is the step function's largest value.
func Peak(steps []Step) int {
	p := int32(0)
	for _, s := range steps {
		p = max(p, s.V)
	}
	return int(p)
}

// Active is the requests in flight over the run.
func (r *Run) Active() []Step {
	return sweep(len(r.Requests), func(i int) (int64, int64) { return r.Requests[i].Start, r.Requests[i].End })
}

// Alive is the sessions alive (from their first start to their last end)
// over the run.
func (r *Run) Alive() []Step {
	return sweep(len(r.Sessions), func(i int) (int64, int64) { return r.Sessions[i].First, r.Sessions[i].Last })
}
