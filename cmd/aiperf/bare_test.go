package main

import (
	"bytes"
	"context"
	"path/filepath"
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

// TestBareGroupListsItsCommands: a command group without one of its
// commands (aiperf runs) prints the group's help, each command with what
// it does, where kong said only `expected one of "list", "show", ...`,
// and exits 2.
func TestBareGroupListsItsCommands(t *testing.T) {
	for group, want := range map[string][]string{
		"runs":    {"Usage: aiperf runs <command>", "runs list", "List stored runs, newest first.", "runs sweeps"},
		"config":  {"Usage: aiperf config <command>", "config validate", "config init"},
		"analyze": {"Usage: aiperf analyze <command>", "analyze swim-lane", "analyze turn-messages"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"--store", filepath.Join(t.TempDir(), "s.db"), group}, &stdout, &stderr)
		assert.Equal(t, ExitUsage, code, group)
		for _, w := range want {
			assert.Contains(t, stdout.String(), w, group)
		}
		assert.Empty(t, stderr.String(), group)
	}
}
