package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutputFlagsRefused: an -o that cannot be written exited 1 in report
// and plot (plot's saying "write figures: mkdir …: not a directory"), 2 in
// analyze: each is a usage error (exit 2) naming --output and what to
// give, before the store is read.
func TestOutputFlagsRefused(t *testing.T) {
	dir := oneStoredRun(t)
	writeFile(t, dir, "afile", "")
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "ff"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "1", "-o", "out" + string(filepath.Separator)}, "--output out/ is a directory: give a file path"},
		{[]string{"report", "1", "-o", "ff"}, "--output ff is a named pipe (FIFO)"},
		{[]string{"report", "1", "-o", "afile/r.html"}, "--output afile/r.html: afile is not a directory: give a file path"},
		{[]string{"plot", "1", "-o", "afile"}, "--output afile is not a directory: give a directory for the figures"},
		{[]string{"plot", "artifacts", "-o", "afile/figs"},
			"--output afile/figs: afile is not a directory: give a directory path for the figures"},
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "out"), 0o755))
		inv := cli(t, dir, tc.args...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", tc.args, inv.stderr)
		assert.Contains(t, inv.stderr, "aiperf: error: "+tc.want, tc.args)
		assert.Empty(t, inv.stdout, tc.args)
	}
	assert.NoFileExists(t, filepath.Join(dir, "out", "r.html"))
}
