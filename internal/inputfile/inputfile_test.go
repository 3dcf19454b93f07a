package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenRefusesWhatIsNotAFile: a FIFO with no writer is refused without
// waiting for one (a blocking open would hang this test until its
// timeout), and so are a device and a directory; a file reads.
func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for path, what := range map[string]string{fifo: "a named pipe (FIFO)", os.DevNull: "a device", dir: "a directory"} {
		_, err := Open(path)
		var nr NotRegularError
		require.True(t, errors.As(err, &nr), "%s: %v", path, err)
		assert.EqualError(t, err, "open "+path+": is "+what+", not a regular file: give the path of a file")
	}
	file := filepath.Join(dir, "f.jsonl")
	require.NoError(t, os.WriteFile(file, []byte("{}\n"), 0o644))
	b, err := ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(b))
	_, err = Open(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
