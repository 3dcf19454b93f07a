package main

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mlflow/mlflowfake"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/store"
)

// TestPlotMLflowUploadOneTrial: `aiperf plot RUN-ID --mlflow-upload` of
// one trial of a multi-trial run logged to the FAKE MLflow server uploads
// to that trial's own MLflow run, as plotting its artifact directory does
// (it went to the sweep's parent run, replacing the sweep's plots/cdf.png
// with one trial's); the trials together (their --name label) still go to
// the parent run they share.
func TestPlotMLflowUploadOneTrial(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	fake := mlflowfake.Start(t)
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--tokenizer", tinyTokenizer(t), "--request-count", "2", "--num-profile-runs", "2",
		"--name", "mt", "--artifact-dir", "mt", "--mlflow-tracking-uri", fake.URL)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	require.Len(t, fake.Runs(), 3, "a parent run and a run per trial")
	parent := fake.Runs()[0].ID

	db, err := store.Open(filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	rows, err := db.ListRuns(context.Background(), store.RunFilter{Name: "mt"})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	trial, err := db.GetRun(context.Background(), rows[0].ID, false)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	own := ""
	for _, e := range trial.Exports {
		if e.Kind == "mlflow" {
			own = e.Ref
			assert.Equal(t, parent, e.Parent, "the trial's run is a child of the parent run")
		}
	}
	require.NotEmpty(t, own)
	hasCDF := func(id string) bool { // the artifacts, not printed when an assertion fails
		for _, r := range fake.Runs() {
			if r.ID == id {
				_, ok := r.Artifacts["plots/cdf.png"]
				return ok
			}
		}
		return false
	}

	out := cliBinary(t, dir, "plot", strconv.FormatInt(rows[0].ID, 10), "--mlflow-upload", "--format", "png",
		"--only", "cdf", "-o", "one")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "uploaded 1 figures to mlflow run "+own)
	assert.True(t, hasCDF(own), "the trial's own run")
	assert.False(t, hasCDF(parent), "the parent run's figures are left as they are")

	out = cliBinary(t, dir, "plot", "mt", "--mlflow-upload", "--format", "png", "--only", "cdf", "-o", "both")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "uploaded 1 figures to mlflow run "+parent)
	assert.True(t, hasCDF(parent), "the trials together: the parent run")
}
