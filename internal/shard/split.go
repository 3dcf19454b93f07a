package shard

import (
	"fmt"
	"sync"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Split divides each phase among w workers, exactly: concurrency, the
// request count, the session count and the prefill cap are shared out with
// the remainder going to the first workers; a rate is divided by w and a
// duration kept. A constant rate's worker i is offset by i/rate, so the w
// schedules (k·w + i)/rate merge into the constant one, k/rate. A rate
// with an in-flight cap is divided in proportion to each worker's part of
// the cap instead, and so are its request and session counts (CapShare),
// so that every worker sends as many requests per slot of its cap as one
// process would: with equal rates, a worker with one slot fewer than
// another would find its cap full (and drop sends) while the other had
// free slots. When w divides the cap the parts are equal and nothing
// changes; when it does not, a constant rate's workers keep their offsets
// i/rate but their merged sends are no longer evenly spaced. Poisson
// arrivals stay Poisson (a sum of w independent Poisson(rate/w) streams is
// Poisson(rate)) given each worker its own seed. Gamma arrivals of shape
// other than 1 do not merge into a gamma process: the merged gaps are
// shorter-tailed than asked for (each worker's stream is gamma). A ramp
// ramps each worker's share over the same duration. User-centric users are
// dealt out as the rest, each worker's rate its users' part of the rate, so
// that every user keeps its users/rate gap between turns (each worker
// staggers its own users' starts).
//
// Every worker must get something of every bounded quantity: more workers
// than a phase's concurrency, requests, sessions, users or prefill cap, or
// than the requests a duration-bound rate phase can send (rate ×
// duration), is an error naming the phase; so is more than MaxWorkers.
// Everything is checked before anything is allocated.
func Split(phases []plan.Phase, w int) ([][]plan.Phase, error) {
	if err := CheckCount(w); err != nil {
		return nil, err
	}
	for _, ph := range phases {
		if err := checkShares(ph, w); err != nil {
			return nil, err
		}
	}
	out := make([][]plan.Phase, w)
	for _, ph := range phases {
		for i := range w {
			s := ph
			s.Concurrency = Share(ph.Concurrency, w, i)
			s.Requests = Share(ph.Requests, w, i)
			s.Sessions = Share(ph.Sessions, w, i)
			s.PrefillConcurrency = Share(ph.PrefillConcurrency, w, i)
			switch {
			case ph.Users > 0:
				s.Users = Share(ph.Users, w, i)
				s.Rate = ph.Rate * float64(s.Users) / float64(ph.Users)
			case ph.Rate > 0:
				s.Rate = ph.Rate / float64(w)
				if ph.Concurrency > 0 { // each worker's part of the rate is its part of the cap
					s.Rate = ph.Rate * float64(s.Concurrency) / float64(ph.Concurrency)
					s.Requests = CapShare(ph.Requests, ph.Concurrency, w, i)
					s.Sessions = CapShare(ph.Sessions, ph.Concurrency, w, i)
				}
				if ph.RateMode != plan.RatePoisson && ph.RateMode != plan.RateGamma {
					s.Offset = ph.Offset + float64(i)/ph.Rate
				}
			}
			out[i] = append(out[i], s)
		}
	}
	return out, nil
}

// MaxWorkers is the most workers a cell may have: each is a process (or a
// pod) holding the tokenizer and the dataset, and the coordinator reads
// every one of them. AIPerf's own cap is 32 by default.
const MaxWorkers = 256

// CheckCount refuses a worker count below 1 or above MaxWorkers.
func CheckCount(w int) error {
	switch {
	case w < 1:
		return fmt.Errorf("--workers must be at least 1, got %d", w)
	case w > MaxWorkers:
		return fmt.Errorf("--workers %d is more than %d, the most a cell may have (each worker is a process holding "+
			"the tokenizer and the dataset); use at most %d", w, MaxWorkers, MaxWorkers)
	}
	return nil
}

// checkShares refuses w workers for ph when one of them would get nothing
// of it.
func checkShares(ph plan.Phase, w int) error {
	for _, q := range []struct {
		n    int
		what string
	}{{ph.Concurrency, "concurrency"}, {ph.Requests, "request count"}, {ph.Sessions, "session count"},
		{ph.PrefillConcurrency, "prefill concurrency"}, {ph.Users, "user count"}} {
		if q.n > 0 && q.n < w {
			return fmt.Errorf("--workers %d is more than the %s phase's %s %d: every worker needs a share of it; use at most %d workers",
				w, ph.Name, q.what, q.n, q.n)
		}
	}
	// A rate phase bounded by its duration alone sends about rate ×
	// duration requests: a worker whose part of them (an even one, or its
	// part of the cap's) is below one would send none.
	if ph.Rate > 0 && ph.Users == 0 && ph.Duration > 0 && ph.Requests == 0 && ph.Sessions == 0 && !ph.Fixed {
		if n := ph.Rate * ph.Duration; !sendsEach(ph, n, w) {
			most := 1
			for k := w - 1; k > 1; k-- {
				if sendsEach(ph, n, k) {
					most = k
					break
				}
			}
			return fmt.Errorf("--workers %d leaves a worker less than one of the %g requests the %s phase sends (%g/s for %g s): "+
				"every worker needs a share of them; use at most %d workers", w, n, ph.Name, ph.Rate, ph.Duration, most)
		}
	}
	return nil
}

// sendsEach reports whether each of w workers gets at least one of the n
// requests of rate phase ph: its even part, or with an in-flight cap its
// part of the cap's (the last worker's is the least).
func sendsEach(ph plan.Phase, n float64, w int) bool {
	if ph.Concurrency > 0 {
		return n*float64(Share(ph.Concurrency, w, w-1))/float64(ph.Concurrency) >= 1
	}
	return n >= float64(w)
}

// Share is worker i's part of n split among w: n/w, plus one for the
// first n%w workers.
func Share(n, w, i int) int {
	s := n / w
	if i < n%w {
		s++
	}
	return s
}

// CapShare is worker i's part of n split among w in proportion to its part
// of the cap c (Share(c, w, i)): n is dealt in rounds of c, each worker
// taking its part of the cap from every whole round and the last, partial
// round shared out as Share does. It is Share(n, w, i) when w divides c,
// and never less than 1 when n ≥ w.
func CapShare(n, c, w, i int) int {
	return n/c*Share(c, w, i) + Share(n%c, w, i)
}

// Sampler draws the index of the next conversation to send.
type Sampler interface{ Next() int }

// Stride is worker i's part of s among w: draws i, i+w, i+2w, ... of the
// same sequence, so the w workers together send exactly what one process
// would, each draw once (the first n draws when n requests are shared out
// with Share).
func Stride(s Sampler, i, w int) Sampler {
	if w <= 1 {
		return s
	}
	return &strided{s: s, skip: i, w: w}
}

// strided is safe for concurrent use: a draw and the skips before it are
// one step, so sessions started at once still take the worker's draws.
type strided struct {
	mu      sync.Mutex
	s       Sampler
	skip, w int
}

func (t *strided) Next() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	for range t.skip {
		t.s.Next()
	}
	t.skip = t.w - 1
	return t.s.Next()
}

// Mine reports whether the j-th entry of a fixed schedule (from 0) is
// worker i's of w: the entries are dealt round-robin and keep their times.
func Mine(j, i, w int) bool { return w <= 1 || j%w == i }
