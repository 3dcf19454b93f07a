package main

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// savedRe is the console line of a written swim lane.
var savedRe = regexp.MustCompile(`saved (\S+) \((\d+)×(\d+) px: (\d+) requests?, (\d+) sessions? in (\d+) slots?`)

// TestSwimLaneE2E: a multi-turn run's swim lane, as the user runs it: the
// PNG at <run dir>/swim_lane.png decodes at the size the console states,
// with every request and session counted; --html writes the viewer
// beside it; -o and .svg choose the file and format.
func TestSwimLaneE2E(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--conversation-num", "4", "--conversation-turn-mean", "3", "--concurrency", "2",
		"--concurrency-ramp-duration", "0.2", "--artifact-dir", "artifacts/sl", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	records := countLines(t, filepath.Join(dir, "artifacts", "sl", "profile_export.jsonl"))

	inv = cli(t, dir, "analyze", "swim-lane", "--run-dirs", "artifacts/sl", "-c", "2", "--html")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	m1 := savedRe.FindStringSubmatch(inv.stdout)
	require.NotNil(t, m1, inv.stdout)
	assert.Equal(t, filepath.Join("artifacts", "sl", "swim_lane.png"), m1[1])
	assert.Equal(t, strconv.Itoa(records), m1[4], "every request of the run")
	assert.Equal(t, "4", m1[5], "a session per conversation")
	f, err := os.Open(filepath.Join(dir, m1[1]))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, m1[2]+"×"+m1[3], fmt.Sprintf("%d×%d", img.Bounds().Dx(), img.Bounds().Dy()))
	page, err := os.ReadFile(filepath.Join(dir, "artifacts", "sl", "swim_lane.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "Content-Security-Policy")
	assert.Contains(t, inv.stdout, "saved "+filepath.Join("artifacts", "sl", "swim_lane.html"))

	inv = cli(t, dir, "analyze", "swim-lane", "artifacts/sl", "-o", "out/lanes.svg", "--ramp", "0.1", "--html")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	svg, err := os.ReadFile(filepath.Join(dir, "out", "lanes.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg[:200]), "<svg")
	assert.FileExists(t, filepath.Join(dir, "out", "lanes.html"))
}

// Several run directories each get their own swim lane; every invalid
// input is refused with exit 2, naming what is wrong (the file, the
// line), before anything is written.
func TestSwimLaneRefuses(t *testing.T) {
	dir := t.TempDir()
	line := `{"metadata":{"x_correlation_id":"s1","conversation_id":"c1","turn_index":0,"request_start_ns":1796357517000000000,"request_end_ns":1796357517100000000}}`
	writeFile(t, dir, "a/profile_export.jsonl", line+"\n")
	writeFile(t, dir, "b/profile_export.jsonl", line+"\n")
	writeFile(t, dir, "bad/profile_export.jsonl", line+"\n"+line+"\n{\"metadata\": \n")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "summary"), 0o755))

	inv := cli(t, dir, "analyze", "swim-lane", "a", "--run-dirs", "b")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.FileExists(t, filepath.Join(dir, "a", "swim_lane.png"))
	assert.FileExists(t, filepath.Join(dir, "b", "swim_lane.png"))
	assert.Contains(t, inv.stderr, "no profile_export_aiperf.json beside the records")

	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "give one or more run directories"},
		{[]string{"a", "b", "-o", "x.png"}, "--out only valid with a single run dir (2 given)"},
		{[]string{"summary"}, filepath.Join("summary", "profile_export.jsonl") + " not found: `aiperf profile` writes it into the run's artifact directory (unless --export-level summary)"},
		{[]string{"--empty-run-dirs"}, "--empty-run-dirs gives no run directory"},
		{[]string{"missing"}, "run directory missing does not exist"},
		{[]string{"bad"}, filepath.Join("bad", "profile_export.jsonl") + ":3: not a JSON record"},
		{[]string{"a", "-c", "0"}, "--concurrency must be at least 1, got 0"},
		{[]string{"a", "--ramp", "-1"}, "--ramp must be a duration of 0 seconds or more"},
		{[]string{"a", "-o", "x.jpg"}, "--out x.jpg: the swim lane is drawn as PNG (.png) or SVG (.svg), not .jpg"},
		{[]string{"a", "-o", "x.html", "--html"}, "--out x.html is the image's path"},
		{[]string{"a", "-o", "a"}, "--out a is a directory"},
	} {
		inv := cli(t, dir, append([]string{"analyze", "swim-lane"}, c.args...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", c.args, inv.stderr)
		assert.Contains(t, inv.stderr, c.want, "%v", c.args)
		assert.Empty(t, inv.stdout, "%v: nothing written", c.args)
	}
	assert.NoFileExists(t, filepath.Join(dir, "bad", "swim_lane.png"))
	assert.False(t, strings.Contains(countFiles(t, dir), "x."), "no --out file written")

	// Of several runs, one that cannot be drawn is skipped and named, the
	// others drawn; the exit is 2.
	require.NoError(t, os.Remove(filepath.Join(dir, "b", "swim_lane.png")))
	inv = cli(t, dir, "analyze", "swim-lane", "summary", "bad", "b")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "skip summary: "+filepath.Join("summary", "profile_export.jsonl")+" not found")
	assert.Contains(t, inv.stderr, "skip bad: "+filepath.Join("bad", "profile_export.jsonl")+":3: not a JSON record")
	assert.Contains(t, inv.stderr, "2 of 3 run directories skipped")
	assert.Contains(t, inv.stdout, "saved "+filepath.Join("b", "swim_lane.png"))
	assert.FileExists(t, filepath.Join(dir, "b", "swim_lane.png"))
}

// countFiles lists the files under dir.
func countFiles(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, filepath.Base(p))
		}
		return err
	}))
	return strings.Join(out, "\n")
}
