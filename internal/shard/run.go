package shard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// run is one Run in progress: what the loop's steps share.
type run struct {
	c        *Coordinator
	ctx      context.Context
	phases   []plan.Phase
	events   chan event
	d        Deadlines // resolved
	exited   int
	started  []bool
	fired    []bool
	stopping bool
	err      error // the first of a hook's error and ctx's
	// othersDrained is when some worker drained each phase another has
	// not (Unix ns; 0: not yet): the others' drain deadline runs from it.
	othersDrained []int64
	startWall     []int64 // each phase's start instant (Unix ns)
	// lastWatch is when the deadlines were last checked, resumed when this
	// process was last found to have missed checks (Unix ns; 0: never): a
	// process stopped (Ctrl-Z, a suspended VM) blames no worker for the
	// silence it did not see, as no deadline runs from before resumed.
	lastWatch, resumed int64
}

// handshake sends the specs, waits for every hello and measures each
// worker's clock, within the handshake deadline and with every worker
// beating.
func (r *run) handshake(specs []Spec) error {
	c := r.c
	deadline := time.NewTimer(r.d.Handshake)
	defer deadline.Stop()
	tick := time.NewTicker(r.d.check())
	defer tick.Stop()
	helloed := make([]bool, len(c.Peers))
	late := func() error {
		return r.lateHandshake(func(i int) bool { return helloed[i] }, "was not prepared (no hello)")
	}
	for i, p := range c.Peers {
		// A worker that cannot take its spec has ended: its end, read
		// below, says why.
		spec := specs[i]
		if p.KeyApart {
			spec.Profile.APIKey = ""
		}
		spec.HeartbeatNs = int64(r.d.heartbeat())
		_ = p.Conn.Send(&Msg{Type: TypeSpec, Spec: &spec})
	}
	for hellos := 0; hellos < len(c.Peers); {
		e, err := r.next(deadline.C, tick.C, late)
		if err != nil {
			return err
		}
		if e.eof {
			return fmt.Errorf("%s did not start: %s", c.Peers[e.w].Name, r.why(e.w))
		}
		switch e.m.Type {
		case TypeError:
			c.peers[e.w].failed = e.m.Err
			return fmt.Errorf("%s did not start: %s", c.Peers[e.w].Name, e.m.Err)
		case TypeHello:
			c.peers[e.w].start = e.m.Start
			helloed[e.w] = true
			hellos++
		default:
			r.handle(e) // a worker may say it is ready before the others said hello
		}
	}
	pings := cmp.Or(c.Pings, 8)
	samples := make([][]Sample, len(c.Peers))
	for k := range pings {
		for _, p := range c.Peers {
			if err := p.Conn.Send(&Msg{Type: TypePing, T0: c.Clock.Wall(c.Clock.Now())}); err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
		}
		late = func() error {
			return r.lateHandshake(func(i int) bool { return len(samples[i]) > k }, "did not answer its clock pings")
		}
		for got := 0; got < len(c.Peers); {
			e, err := r.next(deadline.C, tick.C, late)
			if err != nil {
				return err
			}
			if e.eof {
				return fmt.Errorf("%s ended while its clock was measured: %s", c.Peers[e.w].Name, r.why(e.w))
			}
			if e.m.Type != TypePong {
				r.handle(e) // a worker may say it is ready before its clock is measured
				continue
			}
			samples[e.w] = append(samples[e.w], Sample{T0: e.m.T0, TW: e.m.TW, T1: e.at})
			got++
		}
	}
	for i, p := range c.Peers {
		st := &c.peers[i]
		st.sync = Estimate(samples[i])
		st.shift.Store(st.start - st.sync.OffsetNs - c.Clock.Start().UnixNano())
		st.slack.Store(st.sync.RTTNs + int64(clockSlack))
		if err := p.Conn.Send(&Msg{Type: TypeClock, Offset: st.sync.OffsetNs}); err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	return nil
}

// lateHandshake is the error of the handshake's deadline: the workers
// that have not done what was waited for (done(i) false).
func (r *run) lateHandshake(done func(int) bool, what string) error {
	var errs []error
	for i, p := range r.c.Peers {
		if !done(i) {
			r.c.condemn(i, fmt.Sprintf("%s within %s of its spec (--worker-handshake-timeout)", what, r.d.Handshake))
			errs = append(errs, fmt.Errorf("%s %s within %s of its spec (--worker-handshake-timeout); it was killed",
				p.Name, what, r.d.Handshake))
		}
	}
	return errors.Join(errs...)
}

// next is the next event of the handshake; ctx's end, the deadline (late
// says who missed it) and a worker's silence are errors.
func (r *run) next(deadline, tick <-chan time.Time, late func() error) (event, error) {
	for {
		select {
		case e := <-r.events:
			if e.eof {
				r.exited++
			}
			return e, nil
		case <-r.ctx.Done():
			return event{}, fmt.Errorf("start the workers: %w", context.Cause(r.ctx))
		case <-deadline:
			return event{}, late()
		case <-tick:
			if w := r.silent(r.checked()); w >= 0 {
				return event{}, r.verdictErr(w)
			}
		}
	}
}

// loop runs the phases until every worker ended. It looks for a missed
// deadline on its own ticker and kills the workers still running a grace
// period after a stop on its own timer, whether or not anything arrives.
func (r *run) loop() error {
	c := r.c
	ctxDone := r.ctx.Done()
	tick := time.NewTicker(r.d.check())
	defer tick.Stop()
	var kill <-chan time.Time
	armed := false
	for r.advance(); r.exited < len(c.Peers); r.advance() {
		select {
		case e := <-r.events:
			r.handle(e)
		case <-ctxDone:
			ctxDone = nil
			if r.err == nil {
				r.err = fmt.Errorf("workers stopped: %w", context.Cause(r.ctx))
			}
			r.stop("", "")
		case <-tick.C:
			r.watch()
		case <-kill:
			r.kill(fmt.Sprintf("did not end within %s of being told to stop", r.d.Grace))
			kill = nil // a nil channel never fires again
		}
		if r.stopping && !armed {
			kill, armed = time.After(r.d.Grace), true
		}
	}
	return r.err
}

// watch fails the first worker found silent or late to drain a phase,
// and stops the others. Once the workers were told to stop, the grace
// kill bounds them instead.
func (r *run) watch() {
	if r.stopping {
		return
	}
	now := r.checked()
	if w := r.silent(now); w >= 0 {
		r.stopFor(w)
		return
	}
	for k := range r.phases {
		if !r.started[k] || r.fired[k] {
			continue
		}
		if r.othersDrained[k] == 0 {
			if r.any(func(st *peerState) bool { return st.drained[k] }) {
				r.othersDrained[k] = now
			}
			continue
		}
		if w := r.lateDrain(k, now); w >= 0 {
			r.stopFor(w)
			return
		}
	}
}

// checked notes a check of the deadlines now, and returns now (Unix ns).
// A check later than the ticker allows means this process was stopped
// (missed checks): resumed is then now.
func (r *run) checked() int64 {
	now := time.Now().UnixNano()
	if r.lastWatch != 0 && now-r.lastWatch > int64(2*r.d.check()+time.Second) {
		r.resumed = now
	}
	r.lastWatch = now
	return now
}

// silent condemns the first live worker whose channel has been waiting
// for its next byte longer than the silence deadline (since this process
// resumed, at most); -1: none.
func (r *run) silent(now int64) int {
	c := r.c
	for i, p := range c.Peers {
		if r.gone(i) {
			continue
		}
		wait := p.Conn.Waiting()
		if r.resumed != 0 {
			wait = min(wait, time.Duration(now-r.resumed))
		}
		if wait > r.d.Silence {
			c.condemn(i, fmt.Sprintf("sent nothing for %s %s (--worker-silence-timeout %s): stopped or hung",
				wait.Round(time.Millisecond), r.when(&c.peers[i]), r.d.Silence))
			return i
		}
	}
	return -1
}

// lateDrain condemns the first live worker that has not drained phase k
// within its drain deadline of the latest of: another worker's drain, its
// own last record, the phase's duration's end; -1: none.
func (r *run) lateDrain(k int, now int64) int {
	c, ph := r.c, r.phases[k]
	limit := r.d.drainFor(ph)
	from := max(r.othersDrained[k], r.resumed)
	if ph.Duration > 0 {
		from = max(from, r.startWall[k]+int64(ph.Duration*float64(time.Second)))
	}
	for i := range c.Peers {
		st := &c.peers[i]
		if r.gone(i) || st.drained[k] {
			continue
		}
		if now-max(from, st.lastRecord.Load()) > int64(limit) {
			c.condemn(i, fmt.Sprintf("did not report the end of the %s phase within %s of another worker's, "+
				"nor sent a record (--worker-drain-timeout %s)", ph.Name, limit, limit))
			return i
		}
	}
	return -1
}

// gone reports whether worker w ended or was failed.
func (r *run) gone(w int) bool {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peers[w].exited || c.peers[w].verdict != ""
}

// verdictErr is the error naming worker w and why it was failed.
func (r *run) verdictErr(w int) error {
	c := r.c
	c.mu.Lock()
	why := c.peers[w].verdict
	c.mu.Unlock()
	return fmt.Errorf("%s %s; it was killed (%d records received from it are kept)", c.Peers[w].Name, why,
		c.peers[w].records.Load())
}

func (r *run) handle(e event) {
	st := &r.c.peers[e.w]
	if e.eof {
		r.exited++
		if st.done == nil && !r.stopping {
			// it died (killed, crashed): the cell fails, so the others stop
			// now rather than load the server for a result that is lost
			st.lost = true
			r.stopFor(e.w)
		}
		if r.c.condemned(e.w) {
			r.stopFor(e.w) // it broke the protocol: the cell fails
		}
		return
	}
	switch e.m.Type {
	case TypeReady, TypeDrained:
		k := r.index(e.m.Phase)
		if k < 0 {
			return
		}
		if e.m.Type == TypeReady {
			st.ready[k] = true
		} else {
			st.drained[k] = true
		}
	case TypeDone:
		st.done = e.m.Done
	case TypeError:
		st.failed = e.m.Err
	}
}

func (r *run) index(name string) int {
	for k := range r.phases {
		if r.phases[k].Name == name {
			return k
		}
	}
	return -1
}

// advance starts the next phase once every worker is ready for it, and
// closes each started phase once every worker drained it. A worker that
// ended counts as ready and drained.
func (r *run) advance() {
	c := r.c
	for k := range r.phases {
		if !r.started[k] {
			if r.stopping || !r.all(k, func(st *peerState) bool { return st.ready[k] }) ||
				!r.any(func(st *peerState) bool { return st.ready[k] && !st.exited }) {
				return // the phases start in order
			}
			if c.Hooks.BeforeSend != nil {
				if err := c.Hooks.BeforeSend(r.ctx, r.phases[k]); err != nil {
					r.err = err
					r.stop(CutHookFailed, fmt.Sprintf("the %s phase's control hook failed", r.phases[k].Name))
					return
				}
			}
			r.started[k] = true
			at := c.Clock.Wall(c.Clock.Now()) + int64(cmp.Or(c.Lead, 100*time.Millisecond))
			r.startWall[k] = at
			c.startNs[k].Store(at - c.Clock.Start().UnixNano())
			c.mu.Lock()
			c.progress = &load.Progress{Phase: &r.phases[k], StartNs: at - c.Clock.Start().UnixNano()}
			c.mu.Unlock()
			c.broadcast(&Msg{Type: TypeStart, Phase: r.phases[k].Name, At: at})
		}
		if !r.fired[k] && r.all(k, func(st *peerState) bool { return st.drained[k] }) {
			r.fired[k] = true
			if c.Hooks.Drained != nil {
				c.Hooks.Drained(r.phases[k])
			}
		}
	}
}

// all reports whether every worker passed ok or ended.
func (r *run) all(k int, ok func(*peerState) bool) bool {
	return !r.any(func(st *peerState) bool { return !ok(st) && !st.exited })
}

func (r *run) any(ok func(*peerState) bool) bool {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.peers {
		if ok(&c.peers[i]) {
			return true
		}
	}
	return false
}

// stop tells every worker to stop (Ctrl-C, a failed hook, a failed
// worker), once: cut is why, when not an interrupt ("": one), and marks
// the requests the stop cuts (see Coordinator.cut); why says it on the
// stop message.
func (r *run) stop(cut, why string) {
	if !r.stopping {
		r.stopping = true
		r.c.cutShort.Store(true)
		if cut != "" {
			r.c.cut.Store(&cut) // before the stop: every request it cuts is marked
		}
		r.c.broadcast(&Msg{Type: TypeStop, Err: why})
	}
}

// stopFor tells every worker to stop because worker w failed.
func (r *run) stopFor(w int) {
	r.stop(CutWorkerFailed, r.c.Peers[w].Name+" failed")
}

// kill ends every worker still running at once, failing each for why.
func (r *run) kill(why string) {
	r.stopping = true
	r.c.cutShort.Store(true)
	for i, p := range r.c.Peers {
		switch {
		case r.c.peersExited(i):
		case why == "":
			p.Kill()
		default:
			r.c.condemn(i, why)
		}
	}
}

// wait waits for every worker's channel to close (its process exited).
func (r *run) wait() {
	for r.exited < len(r.c.Peers) {
		if e := <-r.events; e.eof {
			r.exited++
		} else if e.m.Type == TypeDone || e.m.Type == TypeError {
			r.handle(e)
		}
	}
}

// why says how worker w ended.
func (r *run) why(w int) string {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &c.peers[w]
	switch {
	case st.failed != "":
		return st.failed
	case st.exitErr != nil:
		return st.exitErr.Error()
	}
	return "it exited"
}

// workerErrors names each worker that ended without its done, or whose run
// failed for another reason than a stop the coordinator sent.
func (r *run) workerErrors() []error {
	var errs []error
	c := r.c
	for i, p := range c.Peers {
		st := &c.peers[i]
		switch {
		case st.verdict != "":
			errs = append(errs, r.verdictErr(i))
		case st.done == nil && (!r.stopping || st.failed != "" || st.lost):
			errs = append(errs, fmt.Errorf("%s died %s (%d records received from it are kept): %s",
				p.Name, r.when(st), st.records.Load(), r.why(i)))
		case st.done != nil && st.done.Err != "" && !r.stopping:
			errs = append(errs, fmt.Errorf("%s: %s", p.Name, st.done.Err))
		}
	}
	return errs
}

// when says how far a worker got: the phase it was in.
func (r *run) when(st *peerState) string {
	for k := len(r.phases) - 1; k >= 0; k-- {
		if st.ready[k] {
			if st.drained[k] {
				return fmt.Sprintf("after the %s phase", r.phases[k].Name)
			}
			return fmt.Sprintf("during the %s phase", r.phases[k].Name)
		}
	}
	return "before its first phase"
}
