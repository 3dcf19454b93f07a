package outputfile

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Check refuses, by its mode and unopened, every existing output
// that is neither a regular file nor a character device, naming it; a
// missing file, a regular file and a character device may be written.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink("nowhere", dangling))
	loop := filepath.Join(dir, "loop")
	require.NoError(t, os.Symlink("loop", loop))
	for path, want := range map[string]string{
		fifo:     fifo + " is a named pipe (FIFO), not a regular file",
		sock:     sock + " is a socket, not a regular file",
		dir:      dir + " is a directory: give a file path",
		dangling: dangling + " is a symbolic link that names no file",
		loop:     loop + " is a symbolic link that names no file",
	} {
		_, err := Check(path)
		require.Error(t, err, path)
		assert.Contains(t, err.Error(), want)
	}
	for path, inPlace := range map[string]bool{plain: false, filepath.Join(dir, "new"): false, filepath.Join(dir, "a", "b"): false, os.DevNull: true} {
		got, err := Check(path)
		require.NoError(t, err, path)
		assert.Equal(t, inPlace, got, path)
	}
}

// A symbolic link to a regular file keeps naming it: the file it names is
// replaced, whole.
func TestWriteThroughALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.txt")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	link := filepath.Join(dir, "link.txt")
	require.NoError(t, os.Symlink("real.txt", link))
	n, err := Write(link, func(w io.Writer) error { _, err := io.WriteString(w, "new text"); return err })
	require.NoError(t, err)
	assert.Equal(t, int64(8), n)
	got, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, "real.txt", got)
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "new text", string(b))
}
