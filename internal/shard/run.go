package shard

import (
	"cmp"
	"context"
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
	exited   int
	started  []bool
	fired    []bool
	stopping bool
	err      error // the first of a hook's error and ctx's
}

// handshake sends the specs, waits for every hello and measures each
// worker's clock.
func (r *run) handshake(specs []Spec) error {
	c := r.c
	for i, p := range c.Peers {
		// A worker that cannot take its spec has ended: its end, read
		// below, says why.
		spec := specs[i]
		if p.KeyApart {
			spec.Profile.APIKey = ""
		}
		_ = p.Conn.Send(&Msg{Type: TypeSpec, Spec: &spec})
	}
	for hellos := 0; hellos < len(c.Peers); {
		e, err := r.next()
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
			hellos++
		default:
			r.handle(e) // a worker may say it is ready before the others said hello
		}
	}
	pings := cmp.Or(c.Pings, 8)
	samples := make([][]Sample, len(c.Peers))
	for range pings {
		for _, p := range c.Peers {
			if err := p.Conn.Send(&Msg{Type: TypePing, T0: c.Clock.Wall(c.Clock.Now())}); err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
		}
		for got := 0; got < len(c.Peers); {
			e, err := r.next()
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
		if err := p.Conn.Send(&Msg{Type: TypeClock, Offset: st.sync.OffsetNs}); err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	return nil
}

// next is the next event; ctx's end is an error (before the load).
func (r *run) next() (event, error) {
	select {
	case e := <-r.events:
		if e.eof {
			r.exited++
		}
		return e, nil
	case <-r.ctx.Done():
		return event{}, fmt.Errorf("start the workers: %w", context.Cause(r.ctx))
	}
}

// loop runs the phases until every worker ended.
func (r *run) loop() error {
	c := r.c
	ctxDone := r.ctx.Done()
	var kill <-chan time.Time
	for r.advance(); r.exited < len(c.Peers); r.advance() {
		select {
		case e := <-r.events:
			r.handle(e)
		case <-ctxDone:
			ctxDone = nil
			if r.err == nil {
				r.err = fmt.Errorf("workers stopped: %w", context.Cause(r.ctx))
			}
			r.stop()
		}
		if r.stopping && kill == nil {
			kill = time.After(cmp.Or(c.Grace, time.Minute))
		}
		select {
		case <-kill:
			r.kill()
			kill = make(chan time.Time) // never again
		default:
		}
	}
	return r.err
}

func (r *run) handle(e event) {
	st := &r.c.peers[e.w]
	if e.eof {
		r.exited++
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
					r.stop()
					return
				}
			}
			r.started[k] = true
			at := c.Clock.Wall(c.Clock.Now()) + int64(cmp.Or(c.Lead, 100*time.Millisecond))
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

// stop tells every worker to stop (Ctrl-C, a failed hook).
func (r *run) stop() {
	if !r.stopping {
		r.stopping = true
		r.c.broadcast(&Msg{Type: TypeStop})
	}
}

// kill ends every worker at once.
func (r *run) kill() {
	r.stopping = true
	for i, p := range r.c.Peers {
		if !r.c.peersExited(i) {
			p.Kill()
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
		case st.done == nil && (!r.stopping || st.failed != ""):
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
