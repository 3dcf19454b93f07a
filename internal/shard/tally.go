package shard

import (
	"fmt"
	"sync/atomic"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// A worker's account is checked against what arrived of it. Each request
// a worker sends leaves exactly one record (request_num 0, 1, ... within
// its phase, index 0, 1, ... within its run), so the coordinator keeps,
// per worker and phase, the request_nums it merged: a record that arrives
// twice, or a request_num beyond the worker's share of a count-bounded
// phase (a request never assigned to it), fails the cell at once. Its done
// report must then account for every record: per phase, as many requests
// sent and cancelled as arrived, none beyond its share, no count negative;
// and none short of it in a phase bounded by its counts alone that nothing
// cut short (checkShortfall).

// Why the coordinator stopped the workers, when not an interrupt: the
// cause a worker's request cut by that stop is marked with
// (metrics.Record.CutBy) instead of metrics.CutInterrupt.
const (
	CutWorkerFailed = metrics.CutWorkerFailed // another worker failed (died, missed a deadline, lied)
	CutHookFailed   = metrics.CutHookFailed   // a control hook (the KV reset, the profiler) failed
)

// pageBits is how many numbers one page of a seen set holds: 1024 bits,
// 128 bytes.
const pageBits = 1024

// seen is a set of non-negative numbers: a bitset in pages, allocated as
// numbers arrive. The dense numbers of a worker's requests cost a bit
// each (a million: 128 KB); scattered ones a page each at most, less than
// the record that brought it.
type seen struct {
	pages   map[int]*[pageBits / 64]uint64
	lastKey int
	last    *[pageBits / 64]uint64
}

// add adds x (≥ 0) and reports whether it was new.
func (s *seen) add(x int) bool {
	key := x / pageBits
	p := s.last
	if p == nil || key != s.lastKey {
		if s.pages == nil {
			s.pages = map[int]*[pageBits / 64]uint64{}
		}
		if p = s.pages[key]; p == nil {
			p = new([pageBits / 64]uint64)
			s.pages[key] = p
		}
		s.last, s.lastKey = p, key
	}
	bit := x % pageBits
	word, mask := &p[bit/64], uint64(1)<<(bit%64)
	if *word&mask != 0 {
		return false
	}
	*word |= mask
	return true
}

// tally is what arrived of one worker's phase. Only the worker's reader
// touches it.
type tally struct {
	nums      seen  // request_nums merged
	merged    int64 // records merged
	cancelled int64 // of them, cancelled
	// drainedAt is when the worker said the phase drained, on the
	// coordinator's clock (0: not yet): every request of it had ended.
	drainedAt int64
}

// setup readies the coordinator's state for phases run by its Peers,
// worker i with specs[i] (its share of each phase; nil: shares unknown).
func (c *Coordinator) setup(phases []plan.Phase, specs []Spec) {
	n := len(c.Peers)
	c.peers = make([]peerState, n)
	c.phases = phases
	c.sent, c.phaseOf, c.startNs = map[string][]atomic.Int64{}, map[string]int{}, make([]atomic.Int64, len(phases))
	for k, ph := range phases {
		c.sent[ph.Name] = make([]atomic.Int64, n)
		c.phaseOf[ph.Name] = k
	}
	for i := range c.peers {
		st := &c.peers[i]
		st.ready, st.drained = map[int]bool{}, map[int]bool{}
		st.tally = make([]tally, len(phases))
		if i < len(specs) && len(specs[i].Phases) == len(phases) {
			st.share = specs[i].Phases
		}
	}
}

// tallyRecord counts worker w's record of phase k (checked, on the
// coordinator's timebase, not yet renumbered): a request beyond its share,
// one that arrived before, or one that ended after the worker said the
// phase drained is refused.
func (c *Coordinator) tallyRecord(w, k int, rec *metrics.Record) error {
	st := &c.peers[w]
	t, name := &st.tally[k], c.phases[k].Name
	if t.drainedAt != 0 && rec.EndNs > t.drainedAt+st.slack.Load() {
		return fmt.Errorf("record %d: the %s phase's request ended at %s, after this worker reported the phase drained "+
			"(%s on the coordinator's clock)", rec.Index, name, ms(rec.EndNs), ms(t.drainedAt))
	}
	if st.share != nil {
		if q := st.share[k].Requests; q > 0 && rec.RequestNum >= q {
			return fmt.Errorf("record %d: request_num %d is beyond this worker's share of the %s phase (%d requests, "+
				"request_num 0 to %d): a request never assigned to it", rec.Index, rec.RequestNum, name, q, q-1)
		}
	}
	if !t.nums.add(rec.RequestNum) {
		return fmt.Errorf("record %d: request_num %d of the %s phase arrived twice (a duplicate)", rec.Index, rec.RequestNum, name)
	}
	if !st.indexes.add(rec.Index) {
		return fmt.Errorf("record %d: index %d arrived twice (a duplicate)", rec.Index, rec.Index)
	}
	t.merged++
	if rec.Cancelled {
		t.cancelled++
	}
	return nil
}

// drainedPhase notes that worker w said phase name drained, now.
func (c *Coordinator) drainedPhase(w int, name string) {
	if k, ok := c.phaseOf[name]; ok && c.peers[w].tally[k].drainedAt == 0 {
		c.peers[w].tally[k].drainedAt = c.Clock.Now()
	}
}

// checkDone reports why worker w's done report is impossible, nil when it
// is not: per phase, its counts must be non-negative and in range, the
// requests it sent within its share (and all of it when nothing cut the
// phase short: checkShortfall) and equal to the records of that phase
// that arrived, its cancelled ones too, and its stamps within the phase's
// window on the coordinator's clock.
func (c *Coordinator) checkDone(w int, d *Done) error {
	st := &c.peers[w]
	if len(d.Reports) > len(c.phases) {
		return fmt.Errorf("it reported %d phases; the cell has %d", len(d.Reports), len(c.phases))
	}
	now, slack, shift := c.Clock.Now(), st.slack.Load(), st.shift.Load()
	for k := range c.phases {
		ph := &c.phases[k]
		var rep load.PhaseReport
		if k < len(d.Reports) {
			rep = d.Reports[k]
		}
		if rep.Phase.Name != "" && rep.Phase.Name != ph.Name {
			return fmt.Errorf("its report %d is of a phase %q, not the %s phase", k, rep.Phase.Name, ph.Name)
		}
		for _, n := range []struct {
			name string
			v    int
		}{{"sent", rep.Sent}, {"sessions", rep.Sessions}, {"cancelled", rep.Cancelled},
			{"cap_delayed", rep.CapDelayed}, {"cap_skipped", rep.CapSkipped}, {"not_sent", rep.NotSent}} {
			if n.v < 0 || n.v > maxNumber {
				return fmt.Errorf("its report of the %s phase has %s %d, out of range", ph.Name, n.name, n.v)
			}
		}
		if st.share != nil {
			s := &st.share[k]
			if s.Requests > 0 && rep.Sent > s.Requests {
				return fmt.Errorf("it reported sending %d requests of the %s phase, beyond its share of %d", rep.Sent, ph.Name, s.Requests)
			}
			if s.Sessions > 0 && rep.Sessions > s.Sessions {
				return fmt.Errorf("it reported starting %d sessions of the %s phase, beyond its share of %d", rep.Sessions, ph.Name, s.Sessions)
			}
		}
		t := &st.tally[k]
		if int64(rep.Sent) != t.merged {
			return fmt.Errorf("it reported sending %d requests of the %s phase, but %d records of it arrived", rep.Sent, ph.Name, t.merged)
		}
		if int64(rep.Cancelled) != t.cancelled {
			return fmt.Errorf("it reported %d requests of the %s phase cancelled, but %d cancelled records of it arrived",
				rep.Cancelled, ph.Name, t.cancelled)
		}
		if st.share != nil {
			if err := c.checkShortfall(ph, &st.share[k], &rep, d.Err); err != nil {
				return err
			}
		}
		if rep.StartNs == 0 && rep.Sent == 0 {
			continue // the phase did not start there
		}
		start := c.startNs[k].Load()
		if start == 0 {
			return fmt.Errorf("it reported the %s phase under way, which never started", ph.Name)
		}
		type stamp struct {
			name string
			t    int64
		}
		stamps := []stamp{{"start_ns", rep.StartNs}}
		if rep.Sent > 0 {
			stamps = append(stamps, stamp{"first_sched_ns", rep.FirstSchedNs}, stamp{"last_sched_ns", rep.LastSchedNs})
		}
		for _, s := range stamps {
			if at := s.t + shift; at < start-slack || at > now+slack {
				return fmt.Errorf("its report of the %s phase has %s %s, outside the phase's window (%s to %s on the "+
					"coordinator's clock)", ph.Name, s.name, ms(at), ms(start-slack), ms(now+slack))
			}
		}
		if rep.Sent > 0 && rep.FirstSchedNs > rep.LastSchedNs {
			return fmt.Errorf("its report of the %s phase has its first send scheduled after its last", ph.Name)
		}
	}
	return nil
}

// checkShortfall reports why a worker's report rep of phase ph, whose
// share is s, is short of that share, nil when it is not. A phase bounded
// by its counts alone (no duration, not a fixed schedule, whose trace
// decides what is sent) ends only once its requests are sent or its
// sessions started: neither a failed nor a cancelled request ends it
// early, as each counts as sent. It ends short only when it is cut: the
// workers were told to halt (--failed-request-threshold) or stop (Ctrl-C,
// a failed worker or hook), or the worker's own run failed or was stopped
// by a signal (runErr, which fails or interrupts the cell anyway).
func (c *Coordinator) checkShortfall(ph, s *plan.Phase, rep *load.PhaseReport, runErr string) error {
	if ph.Duration > 0 || ph.Fixed || runErr != "" || c.cutShort.Load() {
		return nil
	}
	if s.Requests > 0 && rep.Sent == s.Requests || s.Sessions > 0 && rep.Sessions == s.Sessions {
		return nil
	}
	const uncut = "though nothing cut the phase short (no interrupt, halt, failure or duration)"
	switch {
	case s.Requests > 0 && s.Sessions > 0:
		return fmt.Errorf("it reported sending %d requests and starting %d sessions of the %s phase (%d records of it "+
			"arrived), short of both its share of %d requests and its share of %d sessions, %s",
			rep.Sent, rep.Sessions, ph.Name, rep.Sent, s.Requests, s.Sessions, uncut)
	case s.Requests > 0:
		return fmt.Errorf("it reported sending %d requests of the %s phase (%d records of it arrived), short of its "+
			"share of %d, %s", rep.Sent, ph.Name, rep.Sent, s.Requests, uncut)
	case s.Sessions > 0:
		return fmt.Errorf("it reported starting %d sessions of the %s phase (%d records of it arrived), short of its "+
			"share of %d, %s", rep.Sessions, ph.Name, rep.Sent, s.Sessions, uncut)
	}
	return nil
}

// checkProgress reports why worker w's progress count (m.Sent of phase k)
// is impossible: negative, or beyond its share of a count-bounded phase.
func (c *Coordinator) checkProgress(w, k int, sent int64) error {
	st, ph := &c.peers[w], &c.phases[k]
	if sent < 0 || sent > maxNumber {
		return fmt.Errorf("%d requests of the %s phase sent, out of range", sent, ph.Name)
	}
	if st.share != nil {
		if q := st.share[k].Requests; q > 0 && sent > int64(q) {
			return fmt.Errorf("%d requests of the %s phase sent, beyond its share of %d", sent, ph.Name, q)
		}
	}
	return nil
}
