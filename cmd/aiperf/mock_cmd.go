package main

import (
	"context"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// MockServerCmd is `aiperf mock-server`, the same server as aiperf-mock-server.
type MockServerCmd struct {
	mock.Config `embed:""`
}

// Run serves until ctx is cancelled (Ctrl-C), then says so and exits 130
// as every interrupted command does.
func (c *MockServerCmd) Run(ctx context.Context, g *Globals) error {
	if err := mock.Serve(ctx, c.Config, g.Stderr); err != nil {
		return err
	}
	return interruptedWhile(ctx, "serving", ctx.Err()) // Serve returns nil once ctx is cancelled
}
