package tracesynth

import (
	"context"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const okTrace = `{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [0, 1]}`

// CheckOutput refuses, by its mode and unopened, every existing output
// that is neither a regular file nor a character device, naming it; a
// missing file, a regular file and a character device may be written.
func TestCheckOutput(t *testing.T) {
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
		_, err := CheckOutput(path)
		require.Error(t, err, path)
		assert.Contains(t, err.Error(), want)
	}
	for path, inPlace := range map[string]bool{plain: false, filepath.Join(dir, "new"): false, filepath.Join(dir, "a", "b"): false, os.DevNull: true} {
		got, err := CheckOutput(path)
		require.NoError(t, err, path)
		assert.Equal(t, inPlace, got, path)
	}
}

// synthesize-trace into a FIFO is refused at once (before, the open for
// writing waited for a reader for ever) and the FIFO is left as it was.
func TestWriteFileRefusesAFIFO(t *testing.T) {
	in := write(t, okTrace)
	out := filepath.Join(t.TempDir(), "out.fifo")
	require.NoError(t, syscall.Mkfifo(out, 0o644))
	_, err := WriteFile(context.Background(), in, out, Defaults())
	require.Error(t, err)
	assert.Contains(t, err.Error(), out+" is a named pipe (FIFO), not a regular file")
	st, err := os.Lstat(out)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&fs.ModeNamedPipe, "the FIFO is not replaced")
}

// A character device is written in place, never replaced by a regular
// file: a link to /dev/null stays one, and, as root, a device node made
// with mknod stays a device (before, the temporary file was renamed over
// either).
func TestWriteFileKeepsADevice(t *testing.T) {
	in := write(t, okTrace)
	dir := t.TempDir()
	link := filepath.Join(dir, "null-link")
	require.NoError(t, os.Symlink(os.DevNull, link))
	outs := []string{link}
	if os.Geteuid() == 0 {
		node := filepath.Join(dir, "null-node")
		require.NoError(t, syscall.Mknod(node, syscall.S_IFCHR|0o666, 1<<8|3)) // /dev/null's 1, 3
		outs = append(outs, node)
	}
	for _, out := range outs {
		st, err := WriteFile(context.Background(), in, out, Defaults())
		require.NoError(t, err, out)
		assert.Equal(t, 1, st.Written)
		fi, err := os.Stat(out)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&fs.ModeCharDevice, "%s is still a character device", out)
	}
	target, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, os.DevNull, target, "the link is kept")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, len(outs), "no temporary file left")
}

// The output named as the input under another name (its absolute path, a
// symbolic link to it) is refused and the input left whole (before, only
// the cleaned names were compared and the input was replaced).
func TestWriteFileRefusesItsInput(t *testing.T) {
	in := write(t, okTrace)
	abs, err := filepath.Abs(in)
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "link.jsonl")
	require.NoError(t, os.Symlink(in, link))
	for _, out := range []string{abs, link} {
		_, err := WriteFile(context.Background(), in, out, Defaults())
		require.Error(t, err, out)
		assert.Contains(t, err.Error(), "is the input file")
		b, err := os.ReadFile(in)
		require.NoError(t, err)
		assert.Equal(t, okTrace+"\n", string(b))
		assert.True(t, SameFile(in, out))
	}
}

// A symbolic link to a regular file keeps naming it: the file it names is
// replaced, whole.
func TestWriteOutputThroughALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.txt")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	link := filepath.Join(dir, "link.txt")
	require.NoError(t, os.Symlink("real.txt", link))
	n, err := WriteOutput(link, func(w io.Writer) error { _, err := io.WriteString(w, "new text"); return err })
	require.NoError(t, err)
	assert.Equal(t, int64(8), n)
	got, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, "real.txt", got)
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "new text", string(b))
}

// A block-size problem names the command's own flag: --block-size for
// synthesize-trace, --synthesis-block-size for profile's synthesis, not
// profile's --prompt-input-tokens-block-size, which neither takes.
func TestBlockSizeProblemNamesTheFlag(t *testing.T) {
	in := write(t, `{"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]}`)
	for command, flag := range map[bool]string{true: "--block-size)", false: "--synthesis-block-size)"} {
		p := Defaults()
		p.BlockSize, p.Command = 7, command
		_, err := Synthesize(context.Background(), in, io.Discard, p)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "replay a trace with the block size it was made with, "+flag)
		assert.NotContains(t, err.Error(), "--prompt-input-tokens-block-size")
	}
}
