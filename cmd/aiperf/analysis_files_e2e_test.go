package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The analysis commands' files (swim-lane, turn-messages, analyze-trace,
// synthesize-trace) are checked by one rule: an input or an output that
// exists and is a FIFO (or, for an input, any device) is refused by its
// mode before it is opened, exit 2, naming it. Before, the open of a FIFO
// waited for a writer or reader for ever and one Ctrl-C did not stop it.
// The commands run as subprocesses: should one block, hangGuard kills it.

// swimLineOK is a profile_export.jsonl record.
const swimLineOK = `{"metadata":{"x_correlation_id":"s1","conversation_id":"c1","turn_index":0,"request_start_ns":1796357517000000000,"request_end_ns":1796357517100000000}}` + "\n"

// rawLineOK is a raw-export record.
const rawLineOK = `{"metadata":{"conversation_id":"c","x_correlation_id":"s","turn_index":0,"request_start_ns":1},` +
	`"payload":{"model":"m","messages":[{"role":"user","content":"hello"}]}}` + "\n"

// traceOK is a mooncake trace of 512-token blocks.
const traceOK = `{"timestamp": 0, "input_length": 600, "output_length": 4, "hash_ids": [1, 2]}` + "\n" +
	`{"timestamp": 10, "input_length": 700, "output_length": 4, "hash_ids": [1, 3]}` + "\n"

func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, syscall.Mkfifo(path, 0o644))
}

// assertFIFO checks that path is still the FIFO it was.
func assertFIFO(t *testing.T, path string) {
	t.Helper()
	st, err := os.Lstat(path)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&fs.ModeNamedPipe, "%s is left a FIFO", path)
}

func TestSwimLaneRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "fifo1", "profile_export.jsonl"))
	writeFile(t, dir, "fifo2/profile_export.jsonl", swimLineOK)
	mkfifo(t, filepath.Join(dir, "fifo2", "profile_export_aiperf.json"))
	writeFile(t, dir, "zero/profile_export.jsonl", swimLineOK)
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero", "profile_export_aiperf.json")))
	writeFile(t, dir, "ok/profile_export.jsonl", swimLineOK)
	mkfifo(t, filepath.Join(dir, "out.png"))
	writeFile(t, dir, "outfifo/profile_export.jsonl", swimLineOK)
	mkfifo(t, filepath.Join(dir, "outfifo", "swim_lane.html"))
	require.NoError(t, os.Symlink("profile_export.jsonl", filepath.Join(dir, "ok", "records.png")))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fifo1"}, filepath.Join("fifo1", "profile_export.jsonl") + ": is a named pipe (FIFO), not a regular file"},
		{[]string{"fifo2"}, filepath.Join("fifo2", "profile_export_aiperf.json") + ": is a named pipe (FIFO), not a regular file"},
		{[]string{"zero"}, filepath.Join("zero", "profile_export_aiperf.json") + ": is a device, not a regular file"},
		{[]string{"ok", "-o", "out.png"}, "--out out.png is a named pipe (FIFO), not a regular file"},
		{[]string{"outfifo", "--html"}, "the viewer " + filepath.Join("outfifo", "swim_lane.html") + " is a named pipe (FIFO), not a regular file"},
		{[]string{"ok", "-o", filepath.Join("ok", "records.png")}, "--out " + filepath.Join("ok", "records.png") + " is the input file " + filepath.Join("ok", "profile_export.jsonl")},
	} {
		inv := cliBinary(t, dir, append([]string{"analyze", "swim-lane"}, c.args...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", c.args, inv.stderr)
		assert.Contains(t, inv.stderr, c.want, "%v", c.args)
		assert.Empty(t, inv.stdout, "%v: nothing drawn", c.args)
	}
	assertFIFO(t, filepath.Join(dir, "out.png"))
	assertFIFO(t, filepath.Join(dir, "outfifo", "swim_lane.html"))
	b, err := os.ReadFile(filepath.Join(dir, "ok", "profile_export.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, swimLineOK, string(b), "the records are not drawn over")

	// A character device is written in place: a link to /dev/null takes
	// the image (never /dev/null itself: a regression would replace it).
	require.NoError(t, os.Symlink(os.DevNull, filepath.Join(dir, "null.png")))
	inv := cliBinary(t, dir, "analyze", "swim-lane", "ok", "-o", "null.png")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "saved null.png")
	st, err := os.Stat(filepath.Join(dir, "null.png"))
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&fs.ModeCharDevice, "still the device")
}

// A line whose value is not JSON (a word starting with '-' or a digit,
// strconv's Inf and infinity) is refused at its line; before, it was read.
func TestSwimLaneRefusesNonJSONValues(t *testing.T) {
	dir := t.TempDir()
	md := `"x_correlation_id":"a","request_start_ns":1796357517000000000,"request_end_ns":1796357517100000000`
	for name, line := range map[string]string{
		"garbage":  `{"metadata":{` + md + `,"junk":-garbage}}`,
		"word":     `{"metadata":{` + md + `,"j2":7zz}}`,
		"inf":      `{"metadata":{` + md + `},"metrics":{"time_to_first_token":{"value":-Inf,"unit":"ms"}}}`,
		"infinity": `{"metadata":{` + md + `},"metrics":{"request_latency":{"value":-infinity}}}`,
	} {
		writeFile(t, dir, name+"/profile_export.jsonl", swimLineOK+line+"\n")
		inv := cli(t, dir, "analyze", "swim-lane", name)
		assert.Equal(t, ExitUsage, inv.code, "%s: %s", name, inv.stderr)
		assert.Contains(t, inv.stderr, filepath.Join(name, "profile_export.jsonl")+":2: not a JSON record: invalid value", name)
		assert.NoFileExists(t, filepath.Join(dir, name, "swim_lane.png"))
	}
}

func TestTurnMessagesRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "fifo.jsonl"))
	mkfifo(t, filepath.Join(dir, "fiforun", "profile_export_raw.jsonl"))
	writeFile(t, dir, "run/profile_export_raw.jsonl", rawLineOK)
	mkfifo(t, filepath.Join(dir, "out.html"))
	writeFile(t, dir, "outfifo/profile_export_raw.jsonl", rawLineOK)
	mkfifo(t, filepath.Join(dir, "outfifo", "turn_messages.html"))
	writeFile(t, dir, "records/profile_export.jsonl", swimLineOK)
	writeFile(t, dir, "foo.jsonl", `{"foo":1}`+"\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fifo.jsonl"}, "fifo.jsonl: is a named pipe (FIFO), not a regular file"},
		{[]string{"fiforun"}, filepath.Join("fiforun", "profile_export_raw.jsonl") + ": is a named pipe (FIFO), not a regular file"},
		{[]string{"run", "-o", "out.html"}, "--out out.html is a named pipe (FIFO), not a regular file"},
		{[]string{"outfifo"}, "the viewer " + filepath.Join("outfifo", "turn_messages.html") + " is a named pipe (FIFO), not a regular file"},
		{[]string{filepath.Join("run", "profile_export_raw.jsonl"), "-o", filepath.Join(".", "run", "profile_export_raw.jsonl")}, "is the input file"},
		{[]string{filepath.Join("records", "profile_export.jsonl")}, "no request payloads: profile with --export-level raw"},
		{[]string{"foo.jsonl"}, "no request payloads: profile with --export-level raw"},
	} {
		inv := cliBinary(t, dir, append([]string{"analyze", "turn-messages"}, c.args...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", c.args, inv.stderr)
		assert.Contains(t, inv.stderr, c.want, "%v", c.args)
		assert.Empty(t, inv.stdout, "%v: nothing written", c.args)
	}
	assertFIFO(t, filepath.Join(dir, "out.html"))
	assertFIFO(t, filepath.Join(dir, "outfifo", "turn_messages.html"))
	assert.NoFileExists(t, filepath.Join(dir, "turn_messages.html"), "no empty page for a file without payloads")
	assert.NoFileExists(t, filepath.Join(dir, "records", "turn_messages.html"))
	b, err := os.ReadFile(filepath.Join(dir, "run", "profile_export_raw.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, rawLineOK, string(b), "the export is not overwritten")
}

func TestTraceCommandsRefuseAFIFOOutput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", traceOK)
	mkfifo(t, filepath.Join(dir, "out.fifo"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"synthesize-trace", "trace.jsonl", "out.fifo"}, "the output file out.fifo is a named pipe (FIFO), not a regular file"},
		{[]string{"synthesize-trace", "trace.jsonl", "--output-file", "out.fifo"}, "--output-file out.fifo is a named pipe (FIFO), not a regular file"},
		{[]string{"analyze-trace", "trace.jsonl", "--output-file", "out.fifo"}, "--output-file out.fifo is a named pipe (FIFO), not a regular file"},
		{[]string{"analyze-trace", "out.fifo"}, "out.fifo: is a named pipe (FIFO), not a regular file"},
	} {
		inv := cliBinary(t, dir, c.args...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", c.args, inv.stderr)
		assert.Contains(t, inv.stderr, c.want, "%v", c.args)
		assert.Empty(t, inv.stdout, "%v: nothing analysed or synthesized", c.args)
	}
	assertFIFO(t, filepath.Join(dir, "out.fifo"))
}

// A character device is written in place, never replaced: a link to
// /dev/null takes the synthetic trace, the report and the page, and is
// still a link to it; as root, a device node made with mknod is still one
// afterwards (before, synthesize-trace and turn-messages renamed a
// regular file over either). The tests never name /dev/null itself as an
// output: a regression would replace it, as root.
func TestTraceCommandsWriteADeviceInPlace(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", traceOK)
	writeFile(t, dir, "run/profile_export_raw.jsonl", rawLineOK)
	require.NoError(t, os.Symlink(os.DevNull, filepath.Join(dir, "null")))
	outs := []string{"null"}
	if os.Geteuid() == 0 {
		require.NoError(t, syscall.Mknod(filepath.Join(dir, "node"), syscall.S_IFCHR|0o666, 1<<8|3)) // /dev/null's 1, 3
		outs = append(outs, "node")
	}
	for _, out := range outs {
		for _, args := range [][]string{
			{"synthesize-trace", "trace.jsonl", out},
			{"analyze-trace", "trace.jsonl", "--output-file", out},
			{"analyze", "turn-messages", "run", "-o", out},
		} {
			inv := cli(t, dir, args...)
			require.Equal(t, ExitOK, inv.code, "%v: %s", args, inv.stderr)
			st, err := os.Stat(filepath.Join(dir, out))
			require.NoError(t, err)
			assert.NotZero(t, st.Mode()&fs.ModeCharDevice, "%v: %s is still a device", args, out)
		}
	}
	target, err := os.Readlink(filepath.Join(dir, "null"))
	require.NoError(t, err)
	assert.Equal(t, os.DevNull, target, "the link is kept")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, len(outs)+2, "no temporary file left: the outputs, the trace and the run")
}

// synthesize-trace refuses to write over its input however the output
// names it (its absolute path, ./, a symbolic link); analyze-trace
// --output-file too. Before, only the cleaned names were compared.
func TestSynthesizeTraceRefusesItsInputUnderAnotherName(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "trace.jsonl", traceOK)
	require.NoError(t, os.Symlink("trace.jsonl", filepath.Join(dir, "link.jsonl")))
	for _, args := range [][]string{
		{"synthesize-trace", "trace.jsonl", in},
		{"synthesize-trace", "trace.jsonl", "./trace.jsonl"},
		{"synthesize-trace", "trace.jsonl", "link.jsonl"},
		{"synthesize-trace", "link.jsonl", "--output-file", "trace.jsonl"},
		{"analyze-trace", "trace.jsonl", "--output-file", "link.jsonl"},
	} {
		inv := cli(t, dir, args...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", args, inv.stderr)
		assert.Contains(t, inv.stderr, "is the input file", args)
		b, err := os.ReadFile(in)
		require.NoError(t, err)
		assert.Equal(t, traceOK, string(b), "%v: the input is whole", args)
	}
}

// A trace whose hash ids do not fit --block-size names the command's own
// flag; before, it named profile's --prompt-input-tokens-block-size.
func TestTraceBlockSizeProblemNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", traceOK)
	for _, args := range [][]string{
		{"analyze-trace", "trace.jsonl", "--block-size", "7"},
		{"synthesize-trace", "trace.jsonl", "out.jsonl", "--block-size", "7"},
	} {
		inv := cli(t, dir, args...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", args, inv.stderr)
		assert.Contains(t, inv.stderr, "trace.jsonl:1: hash_ids:", args)
		assert.Contains(t, inv.stderr, "replay a trace with the block size it was made with, --block-size)", args)
		assert.False(t, strings.Contains(inv.stderr, "--prompt-input-tokens-block-size"), "%v: %s", args, inv.stderr)
	}
	assert.NoFileExists(t, filepath.Join(dir, "out.jsonl"))
}
