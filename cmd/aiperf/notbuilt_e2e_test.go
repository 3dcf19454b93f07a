package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/notbuilt"
)

// Every AIPerf option and command on the not-built list is refused on the
// command line (exit 2, nothing sent) with the list's own words: that it
// is AIPerf's, not built here, why, and what to use instead; not kong's
// bare "unknown flag" or "unexpected argument".
func TestNotBuiltOptionsAndCommandsSayWhy(t *testing.T) {
	srv := startMock(t, mock.Config{Fast: true})
	entries, err := notbuilt.All()
	require.NoError(t, err)
	for _, e := range entries {
		args := []string{e.Name, "profile"} // aiperf kube profile
		if e.Option() {
			args = []string{"profile", "-m", "m", "--url", srv.URL, "--request-count", "2", "--ui", "none", e.Name, "x"}
		}
		inv := cli(t, "", args...)
		assert.Equal(t, ExitUsage, inv.code, "%s: %s", e.Name, inv.stderr)
		assert.Equal(t, "aiperf: error: "+e.Refusal()+"\n", inv.stderr, e.Name)
		assert.Contains(t, inv.stderr, "AIPerf", e.Name)
		assert.Contains(t, inv.stderr, e.Why+"; instead, "+e.Instead, e.Name)
	}
	// --name=value is the same option; the built binary says the same.
	inv := cli(t, "", "profile", "-m", "m", "--url", srv.URL, "--hf-subset=main")
	hf, _ := notbuilt.Lookup("--hf-subset")
	assert.Equal(t, "aiperf: error: "+hf.Refusal()+"\n", inv.stderr)
	inv = cliBinary(t, t.TempDir(), "profile", "-m", "m", "--url", srv.URL, "--request-count", "2", "--ui", "none", "--wandb-project", "p")
	wb, _ := notbuilt.Lookup("--wandb-project")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Equal(t, "aiperf: error: "+wb.Refusal()+"\n", inv.stderr)
	assert.Zero(t, srv.control().InferenceRequests, "a refused command line sent requests")

	// A not-built command's name as another command's word is that
	// command's business, not aiperf's command.
	inv = cli(t, "", "runs", "kube")
	assert.Equal(t, ExitUsage, inv.code)
	assert.NotContains(t, inv.stderr, "AIPerf command", inv.stderr)
}

// AIPerf's tutorials write --output-dir and --duration, which neither
// AIPerf nor aiperf has: the error proposes the option meant, where the
// command has it.
func TestTutorialSpellingsProposeTheOption(t *testing.T) {
	srv := startMock(t, mock.Config{Fast: true})
	for flag, meant := range map[string]string{"--output-dir": "--artifact-dir", "--duration": "--benchmark-duration"} {
		inv := cli(t, "", "profile", "-m", "m", "--url", srv.URL, "--request-count", "2", "--ui", "none", flag, "3")
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Equal(t, "aiperf: error: unknown flag "+flag+`, did you mean "`+meant+`"? (some of AIPerf's tutorials write `+
			flag+", which AIPerf does not accept either)\n", inv.stderr)
	}
	assert.Zero(t, srv.control().InferenceRequests)
	inv := cli(t, "", "analyze-trace", "--output-dir", "x") // no --artifact-dir there: kong's words
	assert.Equal(t, ExitUsage, inv.code)
	assert.NotContains(t, inv.stderr, "did you mean \"--artifact-dir\"", inv.stderr)
}
