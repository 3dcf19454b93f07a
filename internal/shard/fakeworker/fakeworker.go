// Package fakeworker is a fake worker for tests: a process that speaks the
// shard protocol on its stdin and stdout as `aiperf worker` does, sends no
// request, and misbehaves in one chosen way (Mode), as a broken or hostile
// worker would. A test binary runs it when Env names a mode (its TestMain
// calls Main).
package fakeworker

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/shard"
)

// Env names the environment variable holding the mode of a fake worker
// process.
const Env = "AIPERF_FAKE_WORKER"

// Mode is how the fake worker misbehaves.
type Mode string

// The modes. Every mode beats as the spec asks, unless the process is
// stopped (SIGSTOP).
const (
	// Good sends its share of each phase, well-formed records (its share
	// of the request count, else of the sessions, one request each, else
	// one record), drains it and ends.
	Good Mode = "good"
	// Short sends one record of each phase whatever its share, drains it
	// and ends, its done report true to what it sent: short of a share of
	// more than one request, as if it had stopped sending unasked.
	Short Mode = "short"
	// NoHello reads its spec and never says it is prepared.
	NoHello Mode = "no-hello"
	// NeverDrained sends its record and never says the phase drained;
	// told to stop, it ends.
	NeverDrained Mode = "never-drained"
	// IgnoreStop is NeverDrained that does not end when told to stop.
	IgnoreStop Mode = "ignore-stop"
	// Impossible sends a record that ends before it was sent.
	Impossible Mode = "impossible"
	// Future sends a record stamped an hour after it arrives.
	Future Mode = "future"
	// Oversized sends a line longer than shard.MaxMessage.
	Oversized Mode = "oversized"
	// Duplicate sends each record twice.
	Duplicate Mode = "duplicate"
	// Foreign sends, beside its record, a copy numbered as a request never
	// assigned to it (index and request_num +100000).
	Foreign Mode = "foreign"
	// WrongPhase sends its record of each phase after the first
	// relabelled as one of the first phase (already drained), as a new
	// request of it; its done report tells the truth.
	WrongPhase Mode = "wrong-phase"
	// DoneInflated reports a million requests sent per phase in its done.
	DoneInflated Mode = "done-inflated"
	// DoneNegative reports negative sessions and cancelled counts in its done.
	DoneNegative Mode = "done-negative"
	// ProgressInflated reports 10^15 requests sent as its progress.
	ProgressInflated Mode = "progress-inflated"
	// Crash sends its record and exits, with no done.
	Crash Mode = "crash"
	// CutOnStop is NeverDrained that, told to stop, first sends a second
	// record cut by the stop (cancelled, cut_by interrupt), as a worker's
	// request in flight is.
	CutOnStop Mode = "cut-on-stop"
)

// Main runs a fake worker in mode on stdin and stdout; it returns the
// process's exit code.
func Main(mode string) int {
	if err := Run(os.Stdin, os.Stdout, Mode(mode)); err != nil {
		fmt.Fprintln(os.Stderr, "fake worker:", err)
		return 1
	}
	return 0
}

// fake is one fake worker's state.
type fake struct {
	conn   *shard.Conn
	mode   Mode
	clock  load.Clock
	mu     sync.Mutex
	offset int64
	starts chan int64
	stop   chan struct{} // closed by a stop (unless IgnoreStop) or the channel's end
	once   sync.Once
	phases []string // the spec's phase names
	kinds  []string // and kinds
	shares []int    // and the records an honest worker sends of each (Good)
	index  int      // its next record's index
	// reports is its account, what an honest done reports.
	reports []load.PhaseReport
}

// Run serves the coordinator on r and w as a fake worker in mode, until
// the channel closes or a stop.
func Run(r io.Reader, w io.Writer, mode Mode) error {
	conn := shard.NewConn(r, w)
	m, err := conn.Recv()
	if err != nil {
		return fmt.Errorf("read the spec: %w", err)
	}
	if m.Spec == nil {
		return errors.New("read the spec: the first message carries none")
	}
	spec := m.Spec
	f := &fake{conn: conn, mode: mode, clock: load.NewClock(), starts: make(chan int64, len(spec.Phases)),
		stop: make(chan struct{}), reports: make([]load.PhaseReport, len(spec.Phases))}
	for _, ph := range spec.Phases {
		f.phases, f.kinds = append(f.phases, ph.Name), append(f.kinds, ph.Kind)
		f.shares = append(f.shares, max(1, cmp.Or(ph.Requests, ph.Sessions)))
	}
	if spec.HeartbeatNs > 0 {
		go f.beat(time.Duration(spec.HeartbeatNs))
	}
	if mode == NoHello {
		f.serve()
		return nil
	}
	if err := conn.Send(&shard.Msg{Type: shard.TypeHello, Start: f.clock.Start().UnixNano()}); err != nil {
		return err
	}
	go f.serve()
	for k, ph := range spec.Phases {
		if err := f.phase(k, ph.Kind); err != nil {
			return err
		}
		if mode == Crash {
			os.Exit(3)
		}
		if mode == NeverDrained || mode == IgnoreStop || mode == CutOnStop {
			<-f.stop
			if mode == CutOnStop {
				if err := f.cut(k, ph.Kind); err != nil {
					return err
				}
			}
			break
		}
		if err := conn.Send(&shard.Msg{Type: shard.TypeDrained, Phase: ph.Name}); err != nil {
			return err
		}
	}
	return conn.Send(&shard.Msg{Type: shard.TypeDone, Done: f.done()})
}

// done is its done report: its account, or its mode's lie.
func (f *fake) done() *shard.Done {
	reps := append([]load.PhaseReport(nil), f.reports...)
	for k := range reps {
		switch f.mode {
		case DoneInflated:
			reps[k].Sent = 1_000_000
		case DoneNegative:
			reps[k].Sessions, reps[k].Cancelled = -5, -3
		}
	}
	return &shard.Done{Reports: reps}
}

// record is the next record of phase k, a request begun at begun (on its
// clock) and ended now, as its account counts it.
func (f *fake) record(k int, kind string, begun int64) metrics.Record {
	now := f.clock.Now()
	r := &f.reports[k]
	if r.Sent == 0 {
		r.FirstSchedNs = begun
	}
	r.Sessions++ // each request a session of its own
	r.LastSchedNs = begun
	rec := metrics.Record{Index: f.index, RequestNum: r.Sent, Phase: f.phases[k], PhaseKind: kind,
		RequestID: fmt.Sprintf("fake-%06d", f.index), Model: "mock-model",
		ScheduledNs: begun, SentNs: begun, EndNs: now, Status: 200, InputTokens: 4, OutputTokens: 1,
		ResponseNs: metrics.StampsOf(now)}
	f.index++
	r.Sent++
	return rec
}

// cut sends a record of phase k cut by a stop, as a real worker's request
// in flight is: cancelled, by an interrupt as far as it knows.
func (f *fake) cut(k int, kind string) error {
	rec := f.record(k, kind, f.reports[k].StartNs)
	rec.Cancelled, rec.CutBy, rec.OutputTokens, rec.ResponseNs = true, metrics.CutInterrupt, 0, metrics.Stamps{}
	rec.Error = &metrics.Error{Code: metrics.CancelledCode, Type: metrics.CancelledType, Message: "context canceled"}
	f.reports[k].Cancelled++
	return f.conn.Send(&shard.Msg{Type: shard.TypeRecord, Record: &rec})
}

// phase says it is ready for phase k, waits for the start instant and
// sends its record (Good: its share of them), or what its mode sends
// instead.
func (f *fake) phase(k int, kind string) error {
	name := f.phases[k]
	if err := f.conn.Send(&shard.Msg{Type: shard.TypeReady, Phase: name}); err != nil {
		return err
	}
	var at int64
	select {
	case at = <-f.starts:
	case <-f.stop:
		return nil
	}
	f.mu.Lock()
	target := at + f.offset
	f.mu.Unlock()
	time.Sleep(time.Duration(target - f.clock.Wall(f.clock.Now())))
	begun := target - f.clock.Start().UnixNano()
	f.reports[k].StartNs = begun
	if f.mode == WrongPhase && k > 0 {
		// a request of this phase (its account true), told as one more of
		// the first phase's
		rec := f.record(k, kind, begun)
		rec.Phase, rec.PhaseKind, rec.RequestNum = f.phases[0], f.kinds[0], f.reports[0].Sent
		return f.conn.Send(&shard.Msg{Type: shard.TypeRecord, Record: &rec})
	}
	rec := f.record(k, kind, begun)
	now := rec.EndNs
	msgs := []*shard.Msg{{Type: shard.TypeRecord, Record: &rec}}
	for f.mode == Good && f.reports[k].Sent < f.shares[k] {
		more := f.record(k, kind, begun)
		msgs = append(msgs, &shard.Msg{Type: shard.TypeRecord, Record: &more})
	}
	switch f.mode {
	case Impossible:
		rec.SentNs, rec.EndNs = now, begun-1 // ends before it was sent
		rec.ResponseNs = metrics.Stamps{}
	case Future:
		rec.EndNs = now + int64(time.Hour)
		rec.ResponseNs = metrics.StampsOf(rec.EndNs)
	case Oversized:
		return f.conn.Send(&shard.Msg{Type: shard.TypeProgress, Phase: strings.Repeat("x", shard.MaxMessage)})
	case Duplicate:
		msgs = append(msgs, msgs[0])
	case Foreign:
		other := rec
		other.Index, other.RequestNum = rec.Index+100000, rec.RequestNum+100000
		msgs = append(msgs, &shard.Msg{Type: shard.TypeRecord, Record: &other})
	case ProgressInflated:
		msgs = append(msgs, &shard.Msg{Type: shard.TypeProgress, Phase: name, Sent: 1e15})
	}
	return f.conn.Send(msgs...)
}

// serve answers the coordinator until the channel ends.
func (f *fake) serve() {
	defer f.stopped()
	for {
		m, err := f.conn.Recv()
		if err != nil {
			return
		}
		switch m.Type {
		case shard.TypePing:
			_ = f.conn.Send(&shard.Msg{Type: shard.TypePong, T0: m.T0, TW: f.clock.Wall(f.clock.Now())})
		case shard.TypeClock:
			f.mu.Lock()
			f.offset = m.Offset
			f.mu.Unlock()
		case shard.TypeStart:
			f.starts <- m.At
		case shard.TypeStop:
			if f.mode != IgnoreStop {
				return
			}
		}
	}
}

func (f *fake) stopped() { f.once.Do(func() { close(f.stop) }) }

// beat says it is alive every d.
func (f *fake) beat(d time.Duration) {
	for range time.Tick(d) {
		if f.conn.Send(&shard.Msg{Type: shard.TypeBeat}) != nil {
			return
		}
	}
}
