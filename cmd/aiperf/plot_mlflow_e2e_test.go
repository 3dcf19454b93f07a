package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mlflow"
	"github.com/aiperf-go/aiperf/internal/mlflow/mlflowfake"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// plotSecret is the tracking server's password in these tests: it must
// never be printed.
const plotSecret = "pl0t-s3cret-pw"

// withCredentials is the fake's URL with user:plotSecret (or pw) in it.
func withCredentials(fake *mlflowfake.Server, pw string) string {
	return strings.Replace(fake.URL, "http://", "http://perf:"+pw+"@", 1)
}

// editExport rewrites an mlflow_export.json's fields.
func editExport(t *testing.T, path string, set map[string]any) {
	t.Helper()
	e := readJSON(t, path)
	for k, v := range set {
		e[k] = v
	}
	b, err := json.Marshal(e)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// newFakeRun creates a run in the fake through the client, as a user would
// with mlflow runs create.
func newFakeRun(t *testing.T, fake *mlflowfake.Server, name string) string {
	t.Helper()
	c, err := mlflow.NewClient(withCredentials(fake, plotSecret), nil)
	require.NoError(t, err)
	info, err := c.CreateRun(context.Background(), "0", name, nil, time.Now())
	require.NoError(t, err)
	return info.RunID
}

// copyDir copies a run's directory (its files, one level) to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dst, 0o755))
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
}

// TestPlotMLflowUploadArtifactDir runs AIPerf's documented command line,
// `aiperf plot --paths DIR --mlflow-upload`, against a run `aiperf
// profile --mlflow-tracking-uri` logged to the FAKE MLflow server: the
// run's mlflow_export.json names the run, and its PNG figures (not the
// SVGs) become that run's artifacts under plots/, byte for byte.
// --mlflow-run-id and --mlflow-tracking-uri send them elsewhere; the
// tracking URI's password is never printed.
func TestPlotMLflowUploadArtifactDir(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	fake := mlflowfake.Start(t)
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "4", "--artifact-dir", "run", "--name", "mlrun",
		"--mlflow-tracking-uri", fake.URL)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	require.FileExists(t, filepath.Join(dir, "run", mlflow.ExportFile))
	logged := fake.Runs()[0]

	out := cliBinary(t, dir, "plot", "--paths", "run", "--mlflow-upload", "--only", "cdf")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "uploaded 1 figures to mlflow run "+logged.ID)
	arts := fake.Runs()[0].Artifacts
	want, err := os.ReadFile(filepath.Join(dir, "run", "plots", "cdf.png"))
	require.NoError(t, err)
	assert.Equal(t, want, arts["plots/cdf.png"], "the PNG, as written")
	assert.NotContains(t, arts, "plots/cdf.svg", "AIPerf uploads its PNG plots only")

	// Another run, on a server that wants credentials: given in the URI.
	fake.Auth = "Basic " + base64.StdEncoding.EncodeToString([]byte("perf:"+plotSecret))
	target := newFakeRun(t, fake, "figures")
	out = cliBinary(t, dir, "plot", "run", "--mlflow-upload", "--format", "png", "--only", "cdf", "-o", "figs",
		"--mlflow-tracking-uri", withCredentials(fake, plotSecret), "--mlflow-run-id", target)
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "uploaded 1 figures to mlflow run "+target)
	assert.Contains(t, fake.Runs()[1].Artifacts, "plots/cdf.png")
	assert.NotContains(t, out.stdout+out.stderr, plotSecret)

	// A wrong password: the figures are written, the upload fails (exit 1)
	// saying the flag's credentials were refused (not that a recorded uri
	// has none), and the password is not printed.
	out = cliBinary(t, dir, "plot", "run", "--mlflow-upload", "--format", "png", "--only", "cdf", "-o", "figs",
		"--mlflow-tracking-uri", withCredentials(fake, "wr0ng-"+plotSecret), "--mlflow-run-id", target)
	require.Equal(t, ExitFailure, out.code, out.stderr)
	assert.Contains(t, out.stderr, "401")
	assert.Contains(t, out.stderr, "the server refused the user and password in --mlflow-tracking-uri: check them")
	assert.NotContains(t, out.stderr, "recorded", "the uri was given, not recorded")
	assert.NotContains(t, out.stdout+out.stderr, plotSecret)
	// None sent: the flag's uri has none.
	out = cliBinary(t, dir, "plot", "run", "--mlflow-upload", "--format", "png", "--only", "cdf", "-o", "figs",
		"--mlflow-tracking-uri", fake.URL, "--mlflow-run-id", target)
	require.Equal(t, ExitFailure, out.code, out.stderr)
	assert.Contains(t, out.stderr, "give the server's credentials in --mlflow-tracking-uri as user:password@, or in "+
		"$MLFLOW_TRACKING_TOKEN or $MLFLOW_TRACKING_USERNAME/PASSWORD: none were sent")

	// The export's tracking URI with its credentials redacted, as ours
	// writes it: $MLFLOW_TRACKING_URI naming the same server supplies them.
	editExport(t, filepath.Join(dir, "run", mlflow.ExportFile), map[string]any{
		"tracking_uri": plan.RedactURL(withCredentials(fake, plotSecret)), "run_id": target})
	t.Setenv("MLFLOW_TRACKING_URI", "")
	out = cliBinary(t, dir, "plot", "run", "--mlflow-upload", "--format", "png", "--only", "cdf", "-o", "figs2")
	require.Equal(t, ExitFailure, out.code, out.stderr)
	assert.Contains(t, out.stderr, ": the tracking uri recorded in "+filepath.Join("run", mlflow.ExportFile)+" keeps none")
	t.Setenv("MLFLOW_TRACKING_URI", withCredentials(fake, plotSecret))
	out = cliBinary(t, dir, "plot", "run", "--mlflow-upload", "--format", "png", "--only", "cdf", "-o", "figs2")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "uploaded 1 figures to mlflow run "+target)
	assert.NotContains(t, out.stdout+out.stderr, plotSecret)

	// Stored runs: --mlflow-run-id overrides the run the store recorded; the
	// server is the one recorded, $MLFLOW_TRACKING_URI (naming it) giving
	// the credentials.
	out = cliBinary(t, dir, "plot", "mlrun", "--mlflow-upload", "--format", "png", "--only", "cdf", "-o", "stored",
		"--mlflow-run-id", target)
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "uploaded 1 figures to mlflow run "+target)
}

// TestPlotMLflowUploadSweepDir: a directory of runs has no
// mlflow_export.json of its own; the figures go to the parent run its runs'
// exports share (a sweep's), and runs with no common parent are refused
// before anything is drawn.
func TestPlotMLflowUploadSweepDir(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	fake := mlflowfake.Start(t)
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "4", "--artifact-dir", "run", "--mlflow-tracking-uri", fake.URL)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	parent := newFakeRun(t, fake, "sweep-parent")
	for i, cell := range []string{"concurrency_1", "concurrency_2"} {
		copyDir(t, filepath.Join(dir, "run"), filepath.Join(dir, "sweep", cell))
		editExport(t, filepath.Join(dir, "sweep", cell, mlflow.ExportFile), map[string]any{
			"run_id": strings.Repeat("c", 31) + string(rune('1'+i)), "parent_run_id": parent})
	}
	out := cliBinary(t, dir, "plot", "sweep", "--mlflow-upload", "--format", "png", "--only", "ttft_vs_throughput")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "uploaded 1 figures to mlflow run "+parent)
	assert.Contains(t, fake.Runs()[1].Artifacts, "plots/ttft_vs_throughput.png")

	editExport(t, filepath.Join(dir, "sweep", "concurrency_2", mlflow.ExportFile), map[string]any{"parent_run_id": nil})
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "sweep", "plots")))
	bad := cli(t, dir, "plot", "sweep", "--mlflow-upload")
	require.Equal(t, ExitUsage, bad.code, bad.stderr)
	assert.Contains(t, bad.stderr, "name 2 MLflow runs with no common parent run: give --mlflow-run-id")
	assert.NoDirExists(t, filepath.Join(dir, "sweep", "plots"), "refused before drawing")
}

// TestPlotMLflowUploadRefused: what cannot be uploaded exits 2 before
// anything is drawn, naming the flag to give.
func TestPlotMLflowUploadRefused(t *testing.T) {
	dir := t.TempDir()
	// Refused before any run is read: the directories hold none. AIPerf's
	// export can name a file store.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "run"), 0o755))
	writeFile(t, filepath.Join(dir, "aiperf"), mlflow.ExportFile, `{"tracking_uri": "file:./mlruns", "run_id": "abc"}`)
	// An export that names no run, one that is a directory.
	writeFile(t, filepath.Join(dir, "null"), mlflow.ExportFile, "null")
	writeFile(t, filepath.Join(dir, "norun"), mlflow.ExportFile, `{"run_id": "", "tracking_uri": "http://127.0.0.1:1"}`)
	writeFile(t, filepath.Join(dir, "dirs", "trial"), mlflow.ExportFile, `{"run_id": ""}`)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "isdir", mlflow.ExportFile), 0o755))
	t.Setenv("MLFLOW_TRACKING_URI", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "aiperf", "--mlflow-upload"}, "--mlflow-upload takes exactly one artifact directory"},
		{[]string{"run", "--mlflow-upload"}, "has no mlflow_export.json (its run was not logged with --mlflow-tracking-uri): give the MLflow run with --mlflow-run-id"},
		{[]string{"null", "--mlflow-upload"}, "no MLflow run is named in " + filepath.Join("null", mlflow.ExportFile) + " (its run_id is empty or missing): give the MLflow run with --mlflow-run-id"},
		{[]string{"norun", "--mlflow-upload"}, "no MLflow run is named in " + filepath.Join("norun", mlflow.ExportFile) + " (its run_id is empty or missing)"},
		{[]string{"dirs", "--mlflow-upload"}, "no MLflow run is named in the 1 mlflow_export.json files under dirs (its run_id is empty or missing)"},
		{[]string{"isdir", "--mlflow-upload"}, "--mlflow-upload: " + filepath.Join("isdir", mlflow.ExportFile) + " is a directory, not an MLflow export record: give the MLflow run with --mlflow-run-id"},
		{[]string{"run", "--mlflow-upload", "--mlflow-run-id", "abc"}, "no MLflow tracking server (run has no mlflow_export.json): give --mlflow-tracking-uri or set $MLFLOW_TRACKING_URI"},
		{[]string{"aiperf", "--mlflow-upload"}, "the tracking uri file:./mlruns (from " + filepath.Join("aiperf", mlflow.ExportFile) + "): want the http(s) URL"},
		{[]string{"run", "--mlflow-upload", "--mlflow-tracking-uri", "file:./mlruns"}, "--mlflow-tracking-uri file:./mlruns: want the http(s) URL"},
		{[]string{"run", "--mlflow-upload", "--mlflow-tracking-uri", "ftp://perf:" + plotSecret + "@host/"}, "--mlflow-tracking-uri ftp://<redacted>@host/: want"},
		{[]string{"run", "--mlflow-upload", "--dashboard"}, "--mlflow-upload and --dashboard do not go together"},
		{[]string{"run", "--mlflow-upload", "--format", "svg"}, "--mlflow-upload uploads the PNG figures (as AIPerf's): add png to --format"},
		{[]string{"run", "--empty-paths"}, "--empty-paths says there are no paths (./artifacts is read), but run was given: drop one"},
	} {
		bad := cli(t, dir, append([]string{"plot"}, c.args...)...)
		assert.Equal(t, ExitUsage, bad.code, "%v: %s", c.args, bad.stderr)
		assert.Contains(t, bad.stderr, c.want, c.args)
		assert.NotContains(t, bad.stderr, plotSecret)
		assert.LessOrEqual(t, strings.Count(bad.stderr, mlflow.ExportFile), 1, "%v: the file named once: %s", c.args, bad.stderr)
		assert.NoDirExists(t, filepath.Join(dir, "run", "plots"), c.args)
	}

	// A FIFO is refused unopened (its open waited for a writer for ever):
	// a subprocess, which hangGuard kills should it block.
	mkfifo(t, filepath.Join(dir, "fifo", mlflow.ExportFile))
	bad := cliBinary(t, dir, "plot", "fifo", "--mlflow-upload")
	assert.Equal(t, ExitUsage, bad.code, bad.stderr)
	assert.Contains(t, bad.stderr, "--mlflow-upload: "+filepath.Join("fifo", mlflow.ExportFile)+" is a named pipe (FIFO), not an MLflow export record")
}

// TestPlotAIPerfNegativeFlags: AIPerf's (cyclopts') negative forms of
// plot's flags are accepted with AIPerf's meaning: --no-dashboard,
// --no-verbose and --no-mlflow-upload write the figures and upload
// nothing; --empty-paths reads ./artifacts, as no path does; the MLflow
// flags without --mlflow-upload are noted as ignored.
func TestPlotAIPerfNegativeFlags(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "4", "--artifact-dir", filepath.Join("artifacts", "one"), "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	out := cliBinary(t, dir, "plot", "--paths", filepath.Join("artifacts", "one"), "--no-dashboard", "--no-verbose",
		"--no-mlflow-upload", "--mlflow-run-id", "abc", "--only", "cdf", "--format", "svg")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.FileExists(t, filepath.Join(dir, "artifacts", "one", "plots", "cdf.svg"))
	assert.NotContains(t, out.stdout, "uploaded")
	assert.NotContains(t, out.stderr, "drew cdf", "--no-verbose")
	assert.Contains(t, out.stderr, "note: --mlflow-tracking-uri and --mlflow-run-id are read with --mlflow-upload only: ignored")

	out = cliBinary(t, dir, "plot", "--empty-paths", "--verbose", "--no-dashboard", "--only", "cdf", "--format", "svg")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "wrote 1 figures to "+filepath.Join("artifacts", "plots"))
	assert.Contains(t, out.stderr, "drew cdf")
	assert.FileExists(t, filepath.Join(dir, "artifacts", "plots", "cdf.svg"))
}
