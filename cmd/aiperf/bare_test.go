package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBareAiperfListsTheCommands: aiperf with no arguments prints the
// commands, as --help does (a newcomer got one line naming a few), and
// exits 2.
func TestBareAiperfListsTheCommands(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, &stdout, &stderr)
	assert.Equal(t, ExitUsage, code)
	for _, cmd := range []string{"Usage: aiperf <command>", "profile", "sweep", "compare", "chat", "analyze swim-lane"} {
		assert.Contains(t, stdout.String(), cmd)
	}
}
