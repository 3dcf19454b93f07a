package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanInterruptedWhilePrinting: the first Ctrl-C stops aiperf plan of a
// large but legal plan (99,856 trials, half a minute of expanding and
// printing, most of it in calls that never looked at the context) with exit
// 130; it used to go on to the end of the table and exit 0. The script's
// print() comes out when the script has been run, before the plan is
// printed: the test interrupts it then.
func TestPlanInterruptedWhilePrinting(t *testing.T) {
	dir := t.TempDir()
	script := writeFile(t, dir, "big.star", `base = profile(model = "m", url = "http://127.0.0.1:18100", request_count = 2)
sweep(name = "big", base = base, matrix = {"concurrency": list(range(1, 317)), "request_count": list(range(1, 317))})
print("declared")
`)
	cmd, _, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), "plan", script)
	awaitOutput(t, stderr, "declared")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	assert.Equal(t, ExitInterrupted, exitCode(t, cmd, hangGuard), "stderr:\n%s", stderr)
	assert.Contains(t, stderr.String(), "aiperf: SIGINT (Ctrl-C): stopping cleanly")
}
