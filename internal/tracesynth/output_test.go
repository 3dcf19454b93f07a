package tracesynth

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/outputfile"
)

const okTrace = `{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [0, 1]}`

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
		assert.True(t, outputfile.SameFile(in, out))
	}
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
