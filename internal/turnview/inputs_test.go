package turnview

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A raw export that is not a regular file is refused by its mode before it
// is opened, naming it: a FIFO given as the file, or found in the run
// directory (before, its open waited for a writer for ever, Ctrl-C or
// not), a device, a directory where the export should be.
func TestFindRefusesNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	device := filepath.Join(dir, "null.jsonl")
	require.NoError(t, os.Symlink(os.DevNull, device))
	runFIFO := filepath.Join(dir, "run1")
	require.NoError(t, os.Mkdir(runFIFO, 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(runFIFO, RawFile), 0o644))
	shards := filepath.Join(dir, "run2")
	require.NoError(t, os.MkdirAll(filepath.Join(shards, rawRecordsDir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shards, rawRecordsDir, "a.jsonl"), nil, 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(shards, rawRecordsDir, "b.jsonl"), 0o644))
	runDir := filepath.Join(dir, "run3")
	require.NoError(t, os.MkdirAll(filepath.Join(runDir, RawFile), 0o755))
	for path, want := range map[string]string{
		fifo:    fifo + ": is a named pipe (FIFO), not a regular file",
		device:  device + ": is a device, not a regular file",
		runFIFO: filepath.Join(runFIFO, RawFile) + ": is a named pipe (FIFO), not a regular file",
		shards:  filepath.Join(shards, rawRecordsDir, "b.jsonl") + ": is a named pipe (FIFO), not a regular file",
		runDir:  filepath.Join(runDir, RawFile) + ": is a directory, not a regular file",
	} {
		_, _, err := Find(path)
		require.Error(t, err, path)
		assert.Contains(t, err.Error(), want)
	}
	// Build opens its files as inputs are opened, whatever gave it them.
	_, err := Build(context.Background(), []string{fifo}, defaults)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fifo+": is a named pipe (FIFO), not a regular file")
}

// Records without a payload (a profile_export.jsonl, any other JSON
// lines) are refused: before, an empty page was written, exit 0.
func TestBuildRefusesRecordsWithoutPayloads(t *testing.T) {
	for name, lines := range map[string][]any{
		"foo":     {`{"foo":1}`, `{"bar":2}`},
		"records": {`{"metadata":{"conversation_id":"c","x_correlation_id":"s","turn_index":0},"metrics":{"request_latency":{"value":1}}}`},
		"scalar":  {`{"metadata":{"conversation_id":"c"},"payload":"gone"}`},
	} {
		files, _, err := Find(writeExport(t, lines...))
		require.NoError(t, err)
		_, err = Build(context.Background(), files, defaults)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "no request payloads: profile with --export-level raw", name)
	}
	// A raw record without messages (a completions payload) is one.
	files, _, err := Find(writeExport(t, `{"metadata":{"conversation_id":"c"},"payload":{"prompt":"hi"}}`))
	require.NoError(t, err)
	v, err := Build(context.Background(), files, defaults)
	require.NoError(t, err)
	assert.Equal(t, 1, v.Turns)
}
