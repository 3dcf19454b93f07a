package starlark_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/aiperf-go/aiperf/starlark"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secret is the content of the files outside the sandbox: no message may
// show it.
const secret = "hunter2"

// tree lays out a project directory with a shared library beside it:
//
//	<dir>/secret.txt, <dir>/outside.star, <dir>/shared/lib.star
//	<dir>/proj/main.star (written by each test), <dir>/proj/pw.txt,
//	<dir>/proj/lib/ok.star, and symlinks in proj/ pointing out of it.
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, src string) { writeFile(t, dir, rel, src) }
	link := func(target, rel string) { require.NoError(t, os.Symlink(target, filepath.Join(dir, rel))) }
	write("secret.txt", secret+"\n")
	write("outside.star", "x = 1\n"+secret+"\n")
	write("shared/lib.star", "load(\"helper.star\", \"H\")\nx = H\n")
	write("shared/helper.star", "H = \"shared\"\n")
	write("proj/pw.txt", secret+"\n")
	write("proj/lib/ok.star", "x = \"ok\"\n")
	link(filepath.Join(dir, "outside.star"), "proj/out.star")
	link(filepath.Join(dir, "shared"), "proj/shared")
	link(filepath.Join(dir, "proj", "pw.txt"), "proj/pw.star")
	link(filepath.Join(dir, "proj", "lib", "ok.star"), "proj/alias.star")
	return dir
}

// loadMain writes proj/main.star and loads it from the real file system.
func loadMain(t *testing.T, dir, src string, o starlark.Options) error {
	t.Helper()
	main := filepath.Join(dir, "proj", "main.star")
	require.NoError(t, os.WriteFile(main, []byte(src), 0o644))
	_, err := starlark.Load(context.Background(), main, o)
	return err
}

func TestLoadStaysInItsSandbox(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	proj := filepath.Join(dir, "proj")
	tests := []struct {
		name, load string
		msg        string // after "cannot load <load>: "
	}{
		{"text file inside", "pw.txt", "not a .star file: load() reads only Starlark modules"},
		{"text file outside", "../secret.txt", "not a .star file: load() reads only Starlark modules"},
		{"dot-dot", "../outside.star", "'..' leads to " + filepath.Join(dir, "outside.star") + ", outside " + proj +
			" (the script's directory); load() reads only inside the script's directory tree; name another directory with --lib-path DIR"},
		{"dot-dot inside the path", "lib/../../outside.star", "'..' leads to " + filepath.Join(dir, "outside.star") + ", outside " + proj +
			" (the script's directory); load() reads only inside the script's directory tree; name another directory with --lib-path DIR"},
		{"absolute", filepath.Join(dir, "outside.star"), "absolute path outside " + proj +
			" (the script's directory); load() reads only inside the script's directory tree; name another directory with --lib-path DIR"},
		{"symlinked file", "out.star", filepath.Join(proj, "out.star") + " is a symlink to " + filepath.Join(dir, "outside.star") +
			", outside " + proj + " (the script's directory); load() reads only inside the script's directory tree; name another directory with --lib-path DIR"},
		{"symlinked directory", "shared/lib.star", filepath.Join(proj, "shared", "lib.star") + " is a symlink to " +
			filepath.Join(dir, "shared", "lib.star") + ", outside " + proj + " (the script's directory); load() reads only inside " +
			"the script's directory tree; name another directory with --lib-path DIR"},
		{"star symlink to a text file", "pw.star", filepath.Join(proj, "pw.star") + " is a symlink to " +
			filepath.Join(proj, "pw.txt") + ", which is not a .star file: load() reads only Starlark modules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := loadMain(t, dir, "\nload(\""+tt.load+"\", \"x\")\n", starlark.Options{})
			errs := scriptErrors(t, err)
			require.Len(t, errs, 1)
			assert.Equal(t, filepath.Join(proj, "main.star")+":2:1", errs[0].Pos, "at the load() statement")
			assert.Equal(t, "cannot load "+tt.load+": "+tt.msg, errs[0].Msg)
			assert.NotContains(t, err.Error(), secret)
		})
	}
}

func TestLoadInsideTheSandbox(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	proj := filepath.Join(dir, "proj")
	src := `
load("lib/ok.star", a = "x")
load("alias.star", b = "x")                # a symlink that stays inside
load("lib/../lib/ok.star", c = "x")        # '..' that stays inside
load("` + filepath.Join(proj, "lib", "ok.star") + `", d = "x")  # an absolute path inside
sweep(name = a + b + c + d, base = profile(model = "m"))
`
	require.NoError(t, loadMain(t, dir, src, starlark.Options{}))

	t.Run("through a symlinked project directory", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "proj-link")
		require.NoError(t, os.Symlink(proj, link))
		_, err := starlark.Load(context.Background(), filepath.Join(link, "main.star"), starlark.Options{})
		require.NoError(t, err)
	})
}

func TestLibPath(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	shared := filepath.Join(dir, "shared")
	src := `
load("../shared/lib.star", a = "x")             # relative, out through '..' into the lib path
load("` + filepath.Join(shared, "lib.star") + `", b = "x")  # absolute
load("shared/lib.star", c = "x")                # through a symlink into the lib path
sweep(name = a + b + c, base = profile(model = "m"))
`
	require.NoError(t, loadMain(t, dir, src, starlark.Options{LibPaths: []string{shared}}))

	err := loadMain(t, dir, "load(\"../outside.star\", \"x\")\n", starlark.Options{LibPaths: []string{shared}})
	errs := scriptErrors(t, err)
	assert.Contains(t, errs[0].Msg, "outside "+filepath.Join(dir, "proj")+" (the script's directory) and the --lib-path directories "+shared+";")
	assert.NotContains(t, err.Error(), secret)

	_, err = starlark.Load(context.Background(), filepath.Join(dir, "proj", "main.star"),
		starlark.Options{LibPaths: []string{filepath.Join(dir, "secret.txt")}})
	require.EqualError(t, err, "lib path "+filepath.Join(dir, "secret.txt")+": "+filepath.Join(dir, "secret.txt")+" is not a directory")
	_, err = starlark.Load(context.Background(), filepath.Join(dir, "proj", "main.star"),
		starlark.Options{LibPaths: []string{filepath.Join(dir, "nope")}})
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestScriptMustBeAStarFile(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	_, err := starlark.Load(context.Background(), filepath.Join(dir, "secret.txt"), starlark.Options{})
	require.EqualError(t, err, "load "+filepath.Join(dir, "secret.txt")+": a sweep script is Starlark in a .star file")
	var se *starlark.Error
	assert.False(t, errors.As(err, &se))
}

func TestLoadRefusesAFIFO(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	fifo := filepath.Join(dir, "proj", "fifo.star")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	// Should the loader open the FIFO, a writer gives it an end of file
	// instead of letting it block forever.
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
	}()
	err := loadMain(t, dir, "load(\"fifo.star\", \"x\")\n", starlark.Options{})
	close(done)
	errs := scriptErrors(t, err)
	assert.Equal(t, "cannot load fifo.star: read "+fifo+": "+fifo+" is not a regular file", errs[0].Msg)
}

// TestLoadRefusesAHugeModule: a module is read whole before any bound of
// the script's own applies, so its size is bounded first (a sparse file
// of 3 GiB costs the test nothing).
func TestLoadRefusesAHugeModule(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	huge := filepath.Join(dir, "proj", "huge.star")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(3<<30))
	require.NoError(t, f.Close())
	errs := scriptErrors(t, loadMain(t, dir, "load(\"huge.star\", \"x\")\n", starlark.Options{}))
	assert.Equal(t, "cannot load huge.star: read "+huge+": "+huge+
		" is larger than 16 MiB, the most a script or module may be: keep data out of scripts, or generate fewer declarations", errs[0].Msg)
}

// TestLoadRefusesAnUnreadVar: a --set key no file of the script names is
// refused (a misspelt one would leave the default in place), with the
// closest name the script does use.
func TestLoadRefusesAnUnreadVar(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	script := "n = int(vars.get(\"requests\", 10))\n"
	require.NoError(t, loadMain(t, dir, script, starlark.Options{Vars: map[string]string{"requests": "3"}}))
	err := loadMain(t, dir, script, starlark.Options{Vars: map[string]string{"requets": "3"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--set requets: the script never reads a variable of that name (a misspelt key would leave its default in place) (did you mean "requests"?)`)
}

// The names suggested for an unread --set key are those the script reads
// from vars, not every string it holds (a default "5", a dict's keys).
func TestUnreadVarSuggestsVariables(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	script := "n = int(vars.get(\"n\", \"5\"))\nd = {\"a\": 1, \"b\": 2}\nurl = vars[\"url\"] if \"url\" in vars else \"x\"\n"
	err := loadMain(t, dir, script, starlark.Options{Vars: map[string]string{"m": "3"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--set m: the script never reads a variable of that name`)
	assert.Contains(t, err.Error(), `(did you mean "n"?)`)
	assert.NotContains(t, err.Error(), `"5"`)
	assert.NotContains(t, err.Error(), `"a"`)
}
