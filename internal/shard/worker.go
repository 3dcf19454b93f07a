package shard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// Worker is the worker's end of the channel.
type Worker struct {
	conn  *Conn
	spec  Spec
	clock load.Clock

	mu     sync.Mutex
	offset int64                 // worker wall − coordinator wall (clock)
	starts map[string]chan int64 // phase → its start instant (coordinator wall)
	begun  map[string]int64      // phase → its start instant on the worker's clock
	halt   func()                // stops issuing (set by the caller)

	stopBeat func() // ends the heartbeat and waits for it (nil: none)
}

// Accept reads the worker's spec from the channel and, when the spec asks
// for them, starts the worker's heartbeats: the coordinator takes a worker
// that says nothing for long to have stalled, whatever it is doing
// (preparing, sending, reducing). A worker never calls control hooks: a
// spec whose profile has them on is refused. On a connection from Dial,
// the wait for the spec ends with the worker's context, and with an error
// once the coordinator sent nothing (not even a beat) for specSilence.
func Accept(r io.Reader, w io.Writer) (*Worker, error) {
	conn := NewConn(r, w)
	m, err := readSpec(conn, r)
	if err != nil {
		return nil, err
	}
	if m.Type == TypeError {
		return nil, fmt.Errorf("the coordinator refused this worker: %s", m.Err)
	}
	if m.Type != TypeSpec || m.Spec == nil {
		return nil, fmt.Errorf("read the worker's spec: got a %q message first", m.Type)
	}
	if err := CheckWorkerProfile(m.Spec.Profile); err != nil {
		return nil, err
	}
	wk := &Worker{conn: conn, spec: *m.Spec, starts: map[string]chan int64{}, begun: map[string]int64{}}
	if m.Spec.HeartbeatNs > 0 {
		wk.stopBeat = wk.beat(time.Duration(m.Spec.HeartbeatNs))
	}
	return wk, nil
}

// beat sends a beat every d until the returned function is called (it
// waits for the last beat to be out) or the channel breaks.
func (w *Worker) beat(d time.Duration) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if w.conn.Send(&Msg{Type: TypeBeat}) != nil {
					return
				}
			case <-done:
				return
			}
		}
	}()
	return sync.OnceFunc(func() { close(done); <-ended })
}

// CheckWorkerProfile refuses a worker profile with a control hook on: the
// coordinator alone resets the KV cache and drives the profiler.
func CheckWorkerProfile(p plan.Profile) error {
	if p.ResetHook().Enabled || p.ProfilerHook().Enabled {
		return errors.New("a worker's profile has a control hook on (the coordinator alone calls them)")
	}
	return nil
}

// WorkerProfile is p as a worker runs it: control hooks off (the
// coordinator calls them) and no failed-request threshold (the
// coordinator judges the merged records and halts every worker).
func WorkerProfile(p plan.Profile) plan.Profile {
	p.FailedRequestThreshold = nil
	p.ResetKVCache, p.ResetKVCachePath, p.ResetKVCacheTimeoutSeconds, p.ResetKVCacheMaxRetrySeconds = false, nil, nil, nil
	p.ServerProfiler, p.ServerProfilerStartPath, p.ServerProfilerStopPath, p.ServerProfilerTimeoutSeconds = false, "", "", nil
	return p
}

// UseAPIKey sets the API key of the worker's profile, one its coordinator
// kept off the channel (Peer.KeyApart); "" leaves it as sent.
func (w *Worker) UseAPIKey(key string) {
	if key != "" {
		w.spec.Profile.APIKey = key
	}
}

// Spec is the worker's share of the cell.
func (w *Worker) Spec() Spec { return w.spec }

// Serve says hello (the worker is prepared; clock is its run's clock) and
// answers the coordinator until the channel closes: ping, clock, start;
// halt calls halt (stop issuing), stop or a closed channel calls cancel.
func (w *Worker) Serve(clock load.Clock, halt func(), cancel context.CancelFunc) error {
	w.clock, w.halt = clock, halt
	if err := w.conn.Send(&Msg{Type: TypeHello, Start: clock.Start().UnixNano()}); err != nil {
		return err
	}
	go func() {
		defer cancel()
		for {
			m, err := w.conn.Recv()
			if err != nil {
				return
			}
			switch m.Type {
			case TypePing:
				_ = w.conn.Send(&Msg{Type: TypePong, T0: m.T0, TW: clock.Wall(clock.Now())})
			case TypeClock:
				w.mu.Lock()
				w.offset = m.Offset
				w.mu.Unlock()
			case TypeStart:
				w.start(m.Phase) <- m.At
			case TypeHalt:
				halt()
			case TypeStop:
				return
			}
		}
	}()
	return nil
}

// start is the channel of phase's start instant.
func (w *Worker) start(phase string) chan int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch, ok := w.starts[phase]
	if !ok {
		ch = make(chan int64, 1)
		w.starts[phase] = ch
	}
	return ch
}

// Hooks wraps inner so that each phase waits for the coordinator's start
// instant before it sends (having said it is ready), takes that instant as
// its start (its schedule's origin, however late the timer woke), and
// reports when it drained.
func (w *Worker) Hooks(inner load.Hooks) load.Hooks {
	return load.Hooks{
		BeforeSend: func(ctx context.Context, ph plan.Phase) error {
			if err := w.conn.Send(&Msg{Type: TypeReady, Phase: ph.Name}); err != nil {
				return err
			}
			var at int64
			select {
			case at = <-w.start(ph.Name):
			case <-ctx.Done():
				return ctx.Err()
			}
			w.mu.Lock()
			target := at + w.offset // the instant on this worker's wall clock
			w.begun[ph.Name] = target - w.clock.Start().UnixNano()
			w.mu.Unlock()
			if d := time.Duration(target - w.clock.Wall(w.clock.Now())); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				}
			}
			if inner.BeforeSend != nil {
				return inner.BeforeSend(ctx, ph)
			}
			return nil
		},
		Start: func(ph plan.Phase) int64 {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.begun[ph.Name]
		},
		Drained: func(ph plan.Phase) {
			if inner.Drained != nil {
				inner.Drained(ph)
			}
			_ = w.conn.Send(&Msg{Type: TypeDrained, Phase: ph.Name})
		},
	}
}

// Add sends finished records, in one flush (a bench.RecordSink).
func (w *Worker) Add(records []metrics.Record) error {
	msgs := make([]*Msg, len(records))
	for i := range records {
		msgs[i] = &Msg{Type: TypeRecord, Record: &records[i]}
	}
	if len(msgs) == 0 {
		return nil
	}
	return w.conn.Send(msgs...)
}

// Progress reports how many requests phase has sent so far.
func (w *Worker) Progress(phase string, sent int64) error {
	return w.conn.Send(&Msg{Type: TypeProgress, Phase: phase, Sent: sent})
}

// Finish reports the worker's end: its last message.
func (w *Worker) Finish(d Done) error {
	w.quiet()
	return w.conn.Send(&Msg{Type: TypeDone, Done: &d})
}

// Fail reports that the worker could not run (instead of done): its last
// message.
func (w *Worker) Fail(err error) {
	w.quiet()
	_ = w.conn.Send(&Msg{Type: TypeError, Err: err.Error()})
}

// quiet ends the heartbeats: the last message follows.
func (w *Worker) quiet() {
	if w.stopBeat != nil {
		w.stopBeat()
	}
}

// Fail reports on wr that a worker could not run before it had a channel
// (its spec unread) or that a connection is refused.
func Fail(wr io.Writer, err error) {
	_ = NewConn(nil, wr).Send(&Msg{Type: TypeError, Err: err.Error()})
}
