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

// TestReadFileMaxRefusesALargerFile: a file of the limit reads whole; one
// byte more is refused with TooLargeError, and a sparse file of a terabyte
// is refused without being read.
func TestReadFileMaxRefusesALargerFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, make([]byte, 1<<20), 0o644))
	b, err := ReadFileMax(file, 1<<20)
	require.NoError(t, err)
	assert.Len(t, b, 1<<20)
	_, err = ReadFileMax(file, 1<<20-1)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.EqualError(t, err, file+" is larger than 1048575 bytes")
	sparse := filepath.Join(dir, "sparse")
	require.NoError(t, os.WriteFile(sparse, nil, 0o644))
	require.NoError(t, os.Truncate(sparse, 1<<40))
	_, err = ReadFileMax(sparse, 1<<20)
	require.ErrorAs(t, err, &tl)
	assert.EqualError(t, err, sparse+" is larger than 1 MiB")
}
