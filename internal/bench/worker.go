package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/shard"
)

// Work runs a worker process's share of a sharded cell, told by its
// coordinator on w: prepare (the tokenizer and the same dataset as the
// coordinator's), then the phases, each on the coordinator's start, the
// finished records streamed back as they end, and at last its phase
// reports and its own audit. A worker never calls control hooks, waits for
// the model or scrapes the server: the coordinator does. An error before
// the load is reported on w (the coordinator fails the cell) and returned.
// When ctx ended (a signal stopped the process) once the load began, the
// worker still sends its records and done report, and then returns an
// *Interrupted: its share was cut short.
func Work(ctx context.Context, w *shard.Worker, log io.Writer) error {
	spec := w.Spec() // checked by shard.Accept: no control hook on
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := newCell(Options{Profile: spec.Profile, Version: spec.Version, Log: log, Records: w})
	c.worker = w
	defer c.discard()
	if err := c.prepare(ctx); err != nil {
		return err
	}
	defer c.ds.Close()
	defer c.fin.close()
	c.phases, c.fin.batch = spec.Phases, 1 // each batch of finished records goes at once
	c.halt = make(chan struct{})
	if err := w.Serve(c.clock, sync.OnceFunc(func() { close(c.halt) }), cancel); err != nil {
		return err
	}
	out := c.runPhases(ctx, nil)
	c.reduce(ctx, out)
	d := shard.Done{Reports: out.reports, Audit: c.run.Audit, StallP99: int64(out.stallP99), StallMax: int64(out.stallMax)}
	stopped := parent.Err() != nil // a signal, not the coordinator's stop
	switch {
	case out.err != nil && stopped && errors.Is(out.err, context.Canceled):
		d.Err = fmt.Sprintf("stopped by %v during its load", context.Cause(parent))
	case out.err != nil:
		d.Err = out.err.Error()
	}
	if err := w.Finish(d); err != nil {
		return err
	}
	if stopped {
		return &Interrupted{Cause: context.Cause(parent)}
	}
	return nil
}

// Interrupted is Work's error when the worker's own context ended (SIGINT
// or SIGTERM) after its load began: its records and done report went to
// the coordinator, which judges the cell; the process exits as interrupted
// so that what supervises it (a Job, a shell) knows its share was cut
// short. Cause is the context's cause (context.Canceled, naming the
// signal).
type Interrupted struct{ Cause error }

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted during the load (%v): its records and report went to the coordinator", e.Cause)
}

func (e *Interrupted) Unwrap() error { return e.Cause }

// follow connects a worker's engine to its coordinator until the returned
// function is called: the coordinator's halt stops its issuing, and the
// requests it sent go back as progress.
func (c *cell) follow(e *load.Engine) (stop func()) {
	done, halt := make(chan struct{}), c.halt
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-halt:
				e.Stop()
				halt = nil
			case <-t.C:
				if pr := e.Progress(); pr != nil {
					if err := c.worker.Progress(pr.Phase.Name, pr.Sent.Load()); err != nil {
						fmt.Fprintf(c.log, "warning: report progress: %v\n", err)
						return
					}
				}
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}
