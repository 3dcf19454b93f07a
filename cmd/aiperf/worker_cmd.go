package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/shard"
	"github.com/aiperf-go/aiperf/internal/termsafe"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/runner/kube"
)

// WorkerCmd is `aiperf worker` (hidden): one worker process of a sharded
// cell (profile --workers), driven by its coordinator over stdin and
// stdout, or, with --connect, over a TCP connection it dials (a worker
// pod); its log goes to stderr.
type WorkerCmd struct {
	Connect     string        `name:"connect" placeholder:"HOST:PORT" help:"Dial the coordinator here and join with the cell's token from $AIPERF_WORKER_TOKEN (a worker pod)."`
	WorkerIndex int           `name:"worker-index" placeholder:"N" help:"This worker's number in the cell (with --connect)."`
	ConnectWait time.Duration `name:"connect-wait" default:"1m" placeholder:"DURATION" help:"How long to retry reaching the coordinator (with --connect)."`
}

// Run serves the coordinator until the worker's share of the load ended.
func (c WorkerCmd) Run(ctx context.Context, g *Globals) error {
	if c.WorkerIndex < 0 {
		return usageErr(fmt.Errorf("--worker-index must be 0 or more, got %d", c.WorkerIndex))
	}
	if c.ConnectWait < 0 {
		return usageErr(fmt.Errorf("--connect-wait must be 0 or more, got %v", c.ConnectWait))
	}
	var r io.Reader = os.Stdin
	w := termsafe.Raw(g.Stdout) // the coordinator's protocol
	if c.Connect != "" {
		token := os.Getenv(kube.WorkerTokenEnv)
		if token == "" {
			return errors.New("aiperf worker --connect: $" + kube.WorkerTokenEnv + " holds no token to join the coordinator with")
		}
		conn, err := shard.Dial(ctx, c.Connect, token, c.WorkerIndex, c.ConnectWait)
		if err != nil {
			return err
		}
		defer conn.Close()
		r, w = conn, conn
	}
	wk, err := shard.Accept(r, w)
	if err != nil {
		shard.Fail(w, err)
		return err
	}
	if c.Connect != "" {
		wk.UseAPIKey(os.Getenv(runner.APIKeyEnv)) // kept off the network (shard.Peer.KeyApart)
	}
	err = bench.Work(ctx, wk, g.Stderr)
	var stopped *bench.Interrupted
	switch {
	case errors.As(err, &stopped): // its done report is out: exit 130
		return withCode(ExitInterrupted, err)
	case err != nil:
		wk.Fail(err)
	}
	return err
}
