package shard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// Peer is a started worker as the coordinator sees it.
type Peer struct {
	Name string // names the worker in errors, e.g. "worker 2 (pid 4242)"
	Conn *Conn
	// Wait returns once the worker ended, with how it ended (nil: well);
	// the coordinator calls it once, after the channel closed.
	Wait func() error
	// Kill ends the worker at once.
	Kill func()
}

// Coordinator drives the workers of one cell through the protocol (see
// the package doc). Its fields are set before Run.
type Coordinator struct {
	Peers []*Peer
	Clock load.Clock // the cell's: records are moved onto it
	// Hooks run once per phase for all the workers: BeforeSend once every
	// worker is ready to send the phase, before the start instant is
	// broadcast (an error stops every worker); Drained once every worker
	// drained it.
	Hooks load.Hooks
	// OnRecord takes each worker's finished records as they arrive, on the
	// coordinator's timebase, Index and Session renumbered (worker w of n:
	// x·n + w); it is called from several goroutines.
	OnRecord func(metrics.Record)
	Lead     time.Duration // how far ahead a start instant is (0: 100 ms)
	Pings    int           // clock samples per worker (0: 8)
	Grace    time.Duration // after a stop, before the workers are killed (0: a minute)

	peers    []peerState
	mu       sync.Mutex
	progress *load.Progress            // of the phase started last
	sent     map[string][]atomic.Int64 // phase → per worker, requests sent
}

// peerState is what the coordinator holds of one worker while it runs.
type peerState struct {
	shift   atomic.Int64 // add to a worker stamp to get the coordinator's
	records atomic.Int64
	start   int64 // the worker clock's start, wall ns (hello)
	sync    Sync
	done    *Done
	failed  string // the worker's error message
	exited  bool
	exitErr error
	ready   map[int]bool
	drained map[int]bool
}

// WorkerOutcome is one worker's account, for the result.
type WorkerOutcome struct {
	Name    string `json:"name"`
	Clock   Sync   `json:"clock"`
	Records int    `json:"records"`
	Done    *Done  `json:"-"`
	Error   string `json:"error,omitempty"`
}

// Outcome is what Run hands back: the merged phase reports (on the
// coordinator's clock) and each worker's account.
type Outcome struct {
	Reports []load.PhaseReport
	Workers []WorkerOutcome
}

type event struct {
	w   int
	m   *Msg
	at  int64 // coordinator wall ns when it arrived
	eof bool
}

// Progress returns the counters of the phase started last (nil before
// one started): the requests the workers said they sent, and the records
// received.
func (c *Coordinator) Progress() *load.Progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.progress
}

// Halt makes every worker stop issuing; the requests in flight finish.
func (c *Coordinator) Halt() { c.broadcast(&Msg{Type: TypeHalt}) }

func (c *Coordinator) broadcast(m *Msg) {
	for i, p := range c.Peers {
		if !c.peersExited(i) {
			_ = p.Conn.Send(m)
		}
	}
}

func (c *Coordinator) peersExited(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peers[i].exited
}

// Run gives each worker its spec, measures its clock, and then runs the
// phases across them until every worker ended: every worker process has
// exited when it returns. A worker that cannot start (it reported an
// error, or ended before its hello) stops the others at once; one that
// dies later is counted as ready and drained for the rest of the run, the
// others go on, and the error names it. ctx's end stops every worker (they
// cut their requests, as a Ctrl-C does) and Run returns its error.
func (c *Coordinator) Run(ctx context.Context, phases []plan.Phase, specs []Spec) (Outcome, error) {
	n := len(c.Peers)
	c.peers = make([]peerState, n)
	c.sent = map[string][]atomic.Int64{}
	for _, ph := range phases {
		c.sent[ph.Name] = make([]atomic.Int64, n)
	}
	events := make(chan event, 256*n)
	for i, p := range c.Peers {
		c.peers[i].ready, c.peers[i].drained = map[int]bool{}, map[int]bool{}
		go c.read(i, p, events)
	}
	r := &run{c: c, ctx: ctx, phases: phases, events: events,
		started: make([]bool, len(phases)), fired: make([]bool, len(phases))}
	if err := r.handshake(specs); err != nil {
		r.kill()
		r.wait()
		return c.outcome(phases), err
	}
	err := r.loop()
	r.wait()
	return c.outcome(phases), errors.Join(append([]error{err}, r.workerErrors()...)...)
}

// read turns worker w's lines into events; records and progress are
// handled here, off the coordinator's loop.
func (c *Coordinator) read(w int, p *Peer, events chan<- event) {
	n := len(c.Peers)
	st := &c.peers[w]
	for {
		m, err := p.Conn.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.Kill() // its channel is broken: nothing more can be read from it
			}
			exitErr := p.Wait()
			c.mu.Lock()
			st.exited, st.exitErr = true, exitErr
			c.mu.Unlock()
			events <- event{w: w, eof: true}
			return
		}
		switch m.Type {
		case TypeRecord:
			if m.Record == nil {
				continue
			}
			rec := *m.Record
			rec.Shift(st.shift.Load())
			rec.Index, rec.Session = rec.Index*n+w, rec.Session*n+w
			st.records.Add(1)
			c.count(&rec)
			if c.OnRecord != nil {
				c.OnRecord(rec)
			}
		case TypeProgress:
			c.mu.Lock()
			sent, pr := c.sent[m.Phase], c.progress
			c.mu.Unlock()
			if sent != nil {
				sent[w].Store(m.Sent)
				if pr != nil && pr.Phase.Name == m.Phase {
					var sum int64
					for i := range sent {
						sum += sent[i].Load()
					}
					pr.Sent.Store(max(sum, pr.Done.Load()))
				}
			}
		default:
			events <- event{w: w, m: m, at: c.Clock.Wall(c.Clock.Now())}
		}
	}
}

// count adds a record to the progress of the phase under way.
func (c *Coordinator) count(r *metrics.Record) {
	pr := c.Progress()
	if pr == nil || pr.Phase.Name != r.Phase {
		return
	}
	pr.Done.Add(1)
	if r.Error != nil && !r.Cancelled {
		pr.Errors.Add(1)
	}
	if s := pr.Sent.Load(); s < pr.Done.Load() {
		pr.Sent.CompareAndSwap(s, pr.Done.Load())
	}
}

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
		_ = p.Conn.Send(&Msg{Type: TypeSpec, Spec: &specs[i]})
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

// outcome merges the workers' phase reports onto the coordinator's clock.
func (c *Coordinator) outcome(phases []plan.Phase) Outcome {
	out := Outcome{Reports: make([]load.PhaseReport, len(phases)), Workers: make([]WorkerOutcome, len(c.Peers))}
	for k, ph := range phases {
		m := &out.Reports[k]
		m.Phase = ph
		for i := range c.peers {
			st := &c.peers[i]
			if st.done == nil || k >= len(st.done.Reports) {
				continue
			}
			w := st.done.Reports[k]
			if w.StartNs == 0 && w.Sent == 0 {
				continue // the phase did not start there
			}
			d := st.shift.Load()
			if m.StartNs == 0 || w.StartNs+d < m.StartNs {
				m.StartNs = w.StartNs + d
			}
			if w.Sent > 0 {
				if m.Sent == 0 || w.FirstSchedNs+d < m.FirstSchedNs {
					m.FirstSchedNs = w.FirstSchedNs + d
				}
				m.LastSchedNs = max(m.LastSchedNs, w.LastSchedNs+d)
			}
			m.Sent += w.Sent
			m.Sessions += w.Sessions
			m.Cancelled += w.Cancelled
			m.CapDelayed += w.CapDelayed
		}
	}
	for i, p := range c.Peers {
		st := &c.peers[i]
		wo := WorkerOutcome{Name: p.Name, Clock: st.sync, Records: int(st.records.Load()), Done: st.done, Error: st.failed}
		if wo.Error == "" && st.done != nil {
			wo.Error = st.done.Err
		}
		out.Workers[i] = wo
	}
	return out
}
