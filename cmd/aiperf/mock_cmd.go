package main

import (
	"context"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// MockServerCmd is `aiperf mock-server`, the same server as aiperf-mock-server.
type MockServerCmd struct {
	mock.Config `embed:""`
}

// Run serves until ctx is cancelled (Ctrl-C).
func (c *MockServerCmd) Run(ctx context.Context, g *Globals) error {
	return mock.Serve(ctx, c.Config, g.Stderr)
}
