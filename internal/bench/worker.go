package bench

import (
	"context"
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
func Work(ctx context.Context, w *shard.Worker, log io.Writer) error {
	spec := w.Spec() // checked by shard.Accept: no control hook on
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
	if out.err != nil {
		d.Err = out.err.Error()
	}
	return w.Finish(d)
}

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
