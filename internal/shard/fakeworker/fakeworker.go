// Package fakeworker is a fake worker for tests: a process that speaks the
// shard protocol on its stdin and stdout as `aiperf worker` does, sends no
// request, and misbehaves in one chosen way (Mode), as a broken or hostile
// worker would. A test binary runs it when Env names a mode (its TestMain
// calls Main).
package fakeworker

import (
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
	// Good sends one well-formed record per phase, drains it and ends.
	Good Mode = "good"
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
}

// Run serves the coordinator on r and w as a fake worker in mode, until
// the channel closes or a stop.
func Run(r io.Reader, w io.Writer, mode Mode) error {
	conn := shard.NewConn(r, w)
	m, err := conn.Recv()
	if err != nil || m.Spec == nil {
		return fmt.Errorf("read the spec: %v", err)
	}
	spec := m.Spec
	f := &fake{conn: conn, mode: mode, clock: load.NewClock(), starts: make(chan int64, len(spec.Phases)),
		stop: make(chan struct{})}
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
	for _, ph := range spec.Phases {
		if err := f.phase(ph.Name, ph.Kind); err != nil {
			return err
		}
		if mode == NeverDrained || mode == IgnoreStop {
			<-f.stop
			break
		}
		if err := conn.Send(&shard.Msg{Type: shard.TypeDrained, Phase: ph.Name}); err != nil {
			return err
		}
	}
	return conn.Send(&shard.Msg{Type: shard.TypeDone, Done: &shard.Done{}})
}

// phase says it is ready, waits for the start instant and sends its one
// record (or what its mode sends instead).
func (f *fake) phase(name, kind string) error {
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
	now := f.clock.Now()
	rec := metrics.Record{Phase: name, PhaseKind: kind, RequestID: "fake-000000", Model: "mock-model",
		ScheduledNs: begun, SentNs: begun, EndNs: now, Status: 200, InputTokens: 4, OutputTokens: 1,
		ResponseNs: metrics.StampsOf(now)}
	switch f.mode {
	case Impossible:
		rec.SentNs, rec.EndNs = now, begun-1 // ends before it was sent
		rec.ResponseNs = metrics.Stamps{}
	case Future:
		rec.EndNs = now + int64(time.Hour)
		rec.ResponseNs = metrics.StampsOf(rec.EndNs)
	case Oversized:
		return f.conn.Send(&shard.Msg{Type: shard.TypeProgress, Phase: strings.Repeat("x", shard.MaxMessage)})
	}
	return f.conn.Send(&shard.Msg{Type: shard.TypeRecord, Record: &rec})
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
