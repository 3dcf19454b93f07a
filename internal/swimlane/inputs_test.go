package swimlane

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run file that is not a regular file is refused by its mode before it
// is opened, naming it: a FIFO (whose open waited for a writer for ever,
// Ctrl-C or not) or a device as profile_export.jsonl, a FIFO as
// profile_export_aiperf.json (refused before the records are read).
func TestLoadRefusesNotRegular(t *testing.T) {
	ok := rec("s1", "c1", 0, 0, 10, nil, "")
	for name, c := range map[string]struct {
		file string
		make func(path string) error
		want string
	}{
		"records fifo":     {FileJSONL, func(p string) error { return syscall.Mkfifo(p, 0o644) }, "is a named pipe (FIFO), not a regular file"},
		"records device":   {FileJSONL, func(p string) error { return os.Symlink(os.DevNull, p) }, "is a device, not a regular file"},
		"config fifo":      {FileJSON, func(p string) error { return syscall.Mkfifo(p, 0o644) }, "is a named pipe (FIFO), not a regular file"},
		"config directory": {FileJSON, func(p string) error { return os.Mkdir(p, 0o755) }, "is a directory, not a regular file"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeRun(t, []string{ok}, "")
			path := filepath.Join(dir, c.file)
			require.NoError(t, os.Remove(filepath.Join(dir, FileJSONL)))
			if c.file != FileJSONL {
				require.NoError(t, os.WriteFile(filepath.Join(dir, FileJSONL), []byte(ok+"\n"), 0o644))
			}
			require.NoError(t, c.make(path))
			_, err := Load(context.Background(), dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+": "+c.want)
		})
	}
}

// profile_export_aiperf.json as /dev/zero is refused: before, its size
// (0) passed the 256 MiB check and os.ReadFile read on without end.
func TestLoadConfigFromADevice(t *testing.T) {
	dir := writeRun(t, []string{rec("s1", "c1", 0, 0, 10, nil, "")}, "")
	path := filepath.Join(dir, FileJSON)
	require.NoError(t, os.Symlink("/dev/zero", path))
	_, err := Load(context.Background(), dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+": is a device, not a regular file")
	r := &Run{}
	err = r.readConfig(path) // the read itself is bounded too
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read "+path+": is a device")
}

// A value that is not JSON is refused at its line, wherever it is (a
// field the view reads or one it skips): strconv.ParseFloat's Inf,
// infinity and NaN, a word starting with '-' or a digit. JSON's own
// numbers are read.
func TestLoadRefusesNonJSONTokens(t *testing.T) {
	md := `"x_correlation_id": "a", "request_start_ns": 1796357517000000000, "request_end_ns": 1796357517000000001`
	for _, tok := range []string{"-garbage", "7zz", "-Inf", "Inf", "-infinity", "NaN", "-nan", "0x10", "1_000", "01", "1.", ".5", "+1", "1e", "1e+", "-", "--1", "truex"} {
		for _, line := range []string{
			fmt.Sprintf(`{"metadata": {%s, "junk": %s}}`, md, tok),
			fmt.Sprintf(`{"metadata": {%s, "agent_depth": %s}}`, md, tok),
			fmt.Sprintf(`{"metadata": {%s}, "metrics": {"time_to_first_token": {"value": %s, "unit": "ms"}}}`, md, tok),
			fmt.Sprintf(`{"metadata": {%s}, "metrics": {"x": [1, {"y": %s}]}}`, md, tok),
		} {
			_, err := Load(context.Background(), writeRun(t, []string{line}, ""))
			if assert.Error(t, err, line) {
				assert.Contains(t, err.Error(), FileJSONL+":1: not a JSON record", line)
			}
		}
	}
	for _, tok := range []string{"0", "-0", "12", "-1.5", "0.25", "1e3", "1E+3", "2.5e-3", "true", "false", "null"} {
		line := fmt.Sprintf(`{"metadata": {%s, "junk": %s, "agent_depth": %s}, "metrics": {"request_latency": {"value": %s}}}`, md, tok,
			strings.NewReplacer("true", "1", "false", "0").Replace(tok), strings.NewReplacer("true", "1", "false", "0").Replace(tok))
		_, err := Load(context.Background(), writeRun(t, []string{line}, ""))
		assert.NoError(t, err, line)
	}
}

// skipValue accepts exactly the JSON values: what encoding/json finds
// valid (before, a literal was any word starting with '-' or a digit, and
// what nested brackets held went unchecked but for strings).
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`{"a": [1, -2.5e3, "x\u00e9\n", true, null, {}]}`, `[1, 7zz]`, `{"a": -garbage}`, `{"a" 1}`,
		`[1,]`, `{"a": 1,}`, `[1 2]`, `-Inf`, `-infinity`, `"\x"`, `"\u12g4"`, `01`, `1.`, `[[[]]]`, `{"a":{"b":[{"c":"]"}]}}`, `[}`, ` 7 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		end, err := skipValue(b, skipSpace(b, 0))
		ok := err == nil && skipSpace(b, end) == len(b)
		if ok != json.Valid(b) {
			t.Fatalf("skipValue(%q): end %d, err %v; encoding/json finds it valid: %v", b, end, err, json.Valid(b))
		}
	})
}
