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
	// KeyApart keeps the API key off the channel (one that crosses a
	// network): the worker reads it from its own environment, where its
	// starter put it (a worker pod: from a Secret).
	KeyApart bool
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
	// Deadlines bound every wait on a worker (deadline.go).
	Deadlines Deadlines
	// URLs is how many --url the workers send to: a record's url is
	// checked against it (0: unchecked).
	URLs int

	peers    []peerState
	mu       sync.Mutex
	progress *load.Progress            // of the phase started last
	sent     map[string][]atomic.Int64 // phase → per worker, requests sent
	phases   []plan.Phase
	phaseOf  map[string]int // phase name → index
	// startNs holds each phase's start instant on the coordinator's clock
	// once it was broadcast (0: not started): records are checked against it.
	startNs []atomic.Int64
	// cut is why the workers were told to stop when it was not an
	// interrupt (CutWorkerFailed, CutHookFailed; nil: not told, or
	// interrupted): their requests cut by the stop are marked with it.
	cut atomic.Pointer[string]
	// cutShort is set once the workers were told to halt or stop (before
	// the message goes): a phase bounded by its counts may then end short
	// of a worker's share (tally.go).
	cutShort atomic.Bool
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
	// lost: it ended without its done before the coordinator told the
	// workers to stop (killed, crashed): the cell fails.
	lost    bool
	ready   map[int]bool
	drained map[int]bool
	// lastRecord is when its last record arrived (Unix ns; 0: none yet);
	// slack how far its stamps may stray (the clock's round trip and
	// clockSlack).
	lastRecord atomic.Int64
	slack      atomic.Int64
	// verdict is why the coordinator failed the worker (killed it): a
	// broken protocol, an impossible record, a deadline missed; "" when it
	// did not. Under Coordinator.mu.
	verdict string
	// What arrived of it, checked against its share and its account
	// (tally.go); only its reader touches them. share is its spec's phases
	// (nil: unknown), tally per phase, indexes its records' (its run's
	// issue order).
	share   []plan.Phase
	tally   []tally
	indexes seen
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
func (c *Coordinator) Halt() {
	c.cutShort.Store(true)
	c.broadcast(&Msg{Type: TypeHalt})
}

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
	c.setup(phases, specs)
	events := make(chan event, 256*n)
	for i, p := range c.Peers {
		go c.read(i, p, events)
	}
	r := &run{c: c, ctx: ctx, phases: phases, events: events, d: c.Deadlines.resolved(),
		started: make([]bool, len(phases)), fired: make([]bool, len(phases)),
		othersDrained: make([]int64, len(phases)), startWall: make([]int64, len(phases))}
	if err := r.handshake(specs); err != nil {
		r.kill("")
		r.wait()
		return c.outcome(phases), err
	}
	err := r.loop()
	r.wait()
	return c.outcome(phases), errors.Join(append([]error{err}, r.workerErrors()...)...)
}

// read turns worker w's lines into events; records and progress are
// handled here, off the coordinator's loop. A worker that breaks the
// protocol (a line too long or not a message, an impossible record) is
// killed at once: nothing more of it is taken.
func (c *Coordinator) read(w int, p *Peer, events chan<- event) {
	st := &c.peers[w]
	for {
		m, err := p.Conn.Recv()
		if err != nil {
			if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrMalformed) {
				c.condemn(w, fmt.Sprintf("broke the protocol (%v)", err))
			} else if !errors.Is(err, io.EOF) {
				p.Kill() // its channel is broken: nothing more can be read from it
			}
			exitErr := p.Wait()
			c.mu.Lock()
			st.exited, st.exitErr = true, exitErr
			c.mu.Unlock()
			events <- event{w: w, eof: true}
			return
		}
		if c.condemned(w) {
			continue // until its channel closes
		}
		switch m.Type {
		case TypeBeat:
			continue
		case TypeRecord:
			if m.Record == nil {
				continue
			}
			if err := c.merge(w, *m.Record); err != nil {
				c.condemn(w, "sent an impossible record: "+err.Error())
			}
			continue
		case TypeProgress:
			c.progressed(w, m)
			continue
		case TypeDrained:
			c.drainedPhase(w, m.Phase)
		case TypeDone:
			if m.Done == nil {
				m.Done = &Done{}
			}
			if err := c.checkDone(w, m.Done); err != nil {
				c.condemn(w, "sent an impossible done report: "+err.Error())
				continue
			}
		}
		events <- event{w: w, m: m, at: c.Clock.Wall(c.Clock.Now())} // for the run loop
	}
}

// merge checks worker w's record, moves it onto the coordinator's
// timebase, tallies it (a duplicate or a request beyond the worker's share
// is refused), numbers it and hands it on.
func (c *Coordinator) merge(w int, rec metrics.Record) error {
	n, st := len(c.Peers), &c.peers[w]
	k, ok := c.phaseOf[rec.Phase]
	start := int64(0)
	if ok {
		start = c.startNs[k].Load()
	}
	if start == 0 {
		return fmt.Errorf("record %d: phase %q is not under way", rec.Index, rec.Phase)
	}
	rec.Shift(st.shift.Load())
	slack := st.slack.Load()
	win := window{phase: &c.phases[k], from: start - slack, until: c.Clock.Now() + slack}
	if err := checkRecord(&rec, win, c.URLs); err != nil {
		return err
	}
	if err := c.tallyRecord(w, k, &rec); err != nil {
		return err
	}
	if rec.Cancelled && rec.CutBy == metrics.CutInterrupt {
		if cut := c.cut.Load(); cut != nil {
			rec.CutBy = *cut // cut by the coordinator's stop, not by an interrupt
		}
	}
	rec.Index, rec.Session, rec.RequestNum = rec.Index*n+w, rec.Session*n+w, rec.RequestNum*n+w
	rec.Worker = w
	st.records.Add(1)
	st.lastRecord.Store(time.Now().UnixNano())
	c.count(&rec)
	if c.OnRecord != nil {
		c.OnRecord(rec)
	}
	return nil
}

// progressed takes worker w's count of the requests a phase sent; an
// impossible one condemns it.
func (c *Coordinator) progressed(w int, m *Msg) {
	c.mu.Lock()
	sent, pr := c.sent[m.Phase], c.progress
	c.mu.Unlock()
	if sent == nil {
		return
	}
	if err := c.checkProgress(w, c.phaseOf[m.Phase], m.Sent); err != nil {
		c.condemn(w, "sent an impossible progress report: "+err.Error())
		return
	}
	sent[w].Store(m.Sent)
	if pr != nil && pr.Phase.Name == m.Phase {
		var sum int64
		for i := range sent {
			sum += sent[i].Load()
		}
		pr.Sent.Store(max(sum, pr.Done.Load()))
	}
}

// condemn fails worker w for why and kills it; the first verdict stands.
// The loop stops the others once its channel closed.
func (c *Coordinator) condemn(w int, why string) {
	c.mu.Lock()
	st := &c.peers[w]
	first := st.verdict == ""
	if first {
		st.verdict = why
	}
	c.mu.Unlock()
	if first {
		c.Peers[w].Kill()
	}
}

// condemned reports whether worker w was failed.
func (c *Coordinator) condemned(w int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peers[w].verdict != ""
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
			m.ReplyGated += w.ReplyGated
			m.CapSkipped += w.CapSkipped
			m.NotSent += w.NotSent
			if w.Branches != nil {
				m.Branches = cmp.Or(m.Branches, &metrics.BranchStats{})
				m.Branches.Add(*w.Branches)
			}
		}
	}
	for i, p := range c.Peers {
		st := &c.peers[i]
		wo := WorkerOutcome{Name: p.Name, Clock: st.sync, Records: int(st.records.Load()), Done: st.done,
			Error: cmp.Or(st.verdict, st.failed)}
		if wo.Error == "" && st.done != nil {
			wo.Error = st.done.Err
		}
		out.Workers[i] = wo
	}
	return out
}
