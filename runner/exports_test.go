package runner_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// podDir is a remote trial's artifact directory.
func podDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

// podLog is what a remote child prints: its exports, then its result,
// among other lines.
func podLog(t *testing.T, dir string, limit int) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("INFO starting\n")
	require.NoError(t, runner.WriteExports(&b, dir, limit))
	b.WriteString("| table | row |\n")
	require.NoError(t, runner.WriteFrame(&b, framedRun(result.StatusComplete)))
	return b.Bytes()
}

func TestExportsComeBackFromTheLog(t *testing.T) {
	files := map[string]string{
		"profile_export_aiperf.json": `{"request_count": {"avg": 4}}`,
		"profile_export.jsonl":       strings.Repeat(`{"metadata": {}, "metrics": {}}`+"\n", 5000),
		"inputs.json":                `{"data": []}`,
		"server_metrics/export.csv":  "a,b\n1,2\n",
		"empty.csv":                  "",
	}
	log := podLog(t, podDir(t, files), runner.ExportFrameLimit)
	local := t.TempDir()
	warnings, err := runner.ReadExports(log, local)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	for name, content := range files {
		b, err := os.ReadFile(filepath.Join(local, filepath.FromSlash(name)))
		require.NoError(t, err, name)
		assert.Equal(t, content, string(b), name)
	}
	run, err := runner.ReadFrame(bytes.NewReader(log))
	require.NoError(t, err, "the result frame still reads")
	assert.Equal(t, result.StatusComplete, run.Status)

	kept := string(runner.StripFrameData(log))
	assert.NotContains(t, kept, "-DATA ", "the trial's log keeps no payload")
	assert.Contains(t, kept, "AIPERF-RESULT-END")
	assert.Contains(t, kept, "| table | row |")
	assert.Less(t, len(kept), 3000)
}

func TestExportTooLargeForTheLogStaysWithAWarning(t *testing.T) {
	noise := make([]byte, 4000)
	_, _ = rand.Read(noise)
	big := hex.EncodeToString(noise) // about 4 KB gzipped: over a 2 KiB limit
	dir := podDir(t, map[string]string{"profile_export_aiperf.json": "{}", "profile_export.jsonl": big})
	log := podLog(t, dir, 2048)
	local := t.TempDir()
	warnings, err := runner.ReadExports(log, local)
	require.NoError(t, err)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "export profile_export.jsonl (0.0 MiB) was not brought back from the pod")
	assert.Contains(t, warnings[0], "over the 0.0 MiB the pod log carries")
	assert.FileExists(t, filepath.Join(local, "profile_export_aiperf.json"), "what fits comes back")
	assert.NoFileExists(t, filepath.Join(local, "profile_export.jsonl"))
}

func TestExportDamageFailsTheIngestion(t *testing.T) {
	dir := podDir(t, map[string]string{"profile_export_aiperf.json": strings.Repeat(`{"k": "value"}`, 400), "inputs.json": "{}"})
	log := string(podLog(t, dir, runner.ExportFrameLimit))
	local := t.TempDir()

	// The larger file's frame comes last: the smaller one checks out, and
	// is still not written.
	i := strings.LastIndex(log, "AIPERF-FILE-BEGIN v1 bytes=") + len("AIPERF-FILE-BEGIN v1 bytes=")
	tampered := log[:i] + "1" + log[i:]
	_, err := runner.ReadExports([]byte(tampered), local)
	assert.ErrorContains(t, err, "export profile_export_aiperf.json: checksum mismatch")
	assert.NoFileExists(t, filepath.Join(local, "inputs.json"), "nothing written when an export fails")

	// The first file's frame lost (a log rotated at its start).
	start := strings.Index(log, "AIPERF-FILE-BEGIN")
	end := strings.Index(log, "AIPERF-FILE-END") + len("AIPERF-FILE-END")
	_, err = runner.ReadExports([]byte(log[:start]+log[end:]), local)
	assert.ErrorContains(t, err, "is missing from the pod log, which was cut")

	escape := strings.Replace(log, "name=inputs.json", "name=..%2Fescape", 1)
	_, err = runner.ReadExports([]byte(escape), local)
	assert.ErrorContains(t, err, "not a file of the trial's directory")
	assert.NoFileExists(t, filepath.Join(filepath.Dir(local), "escape"))

	warnings, err := runner.ReadExports([]byte("a child that died early\n"), local)
	assert.NoError(t, err, "no manifest: nothing to bring back")
	assert.Empty(t, warnings)
}

// FuzzReadExports reads arbitrary pod logs: ReadExports never panics, writes
// only inside the trial's directory, and writes nothing when it fails.
func FuzzReadExports(f *testing.F) {
	seed := f.TempDir()
	if err := os.WriteFile(filepath.Join(seed, "inputs.json"), []byte(`{"data": []}`), 0o644); err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	if err := runner.WriteExports(&b, seed, runner.ExportFrameLimit); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte("AIPERF-FILE-BEGIN v1 bytes=2 sha256=00 name=..%2Fx\nAIPERF-FILE-DATA AAAA\nAIPERF-FILE-END\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "trial")
		require.NoError(t, os.Mkdir(dir, 0o755))
		_, err := runner.ReadExports(log, dir)
		if err != nil {
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries, "nothing written on %v", err)
		}
		siblings, _ := os.ReadDir(root)
		assert.Len(t, siblings, 1, "nothing written outside the trial's directory")
	})
}
