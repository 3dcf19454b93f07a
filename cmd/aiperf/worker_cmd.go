package main

import (
	"context"
	"os"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/shard"
)

// WorkerCmd is `aiperf worker` (hidden): one worker process of a sharded
// cell (profile --workers), driven by its coordinator over stdin and
// stdout; its log goes to stderr.
type WorkerCmd struct{}

// Run serves the coordinator until the worker's share of the load ended.
func (WorkerCmd) Run(ctx context.Context, g *Globals) error {
	w, err := shard.Accept(os.Stdin, g.Stdout)
	if err != nil {
		shard.Fail(g.Stdout, err)
		return err
	}
	if err := bench.Work(ctx, w, g.Stderr); err != nil {
		shard.Fail(g.Stdout, err)
		return err
	}
	return nil
}
