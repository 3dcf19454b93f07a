package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompletionInstallRefusesNonRegularFiles: -o follows the output-file
// rule of the other commands' outputs: a named pipe, a directory or a path
// under a file is refused by its mode, exit 2, before it is opened (the
// open of a FIFO waited for a reader for ever, and a first SIGTERM did not
// end it), and left as it was; a regular file there is replaced, as
// before. It runs as a subprocess: should it block, hangGuard kills it.
func TestCompletionInstallRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "fifo"))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "adir"), 0o755))
	writeFile(t, dir, "afile", "x\n")
	for _, c := range []struct{ out, want string }{
		{"fifo", "install the completion: -o fifo is a named pipe (FIFO), not a regular file: give the path of a file"},
		{"adir", "install the completion: -o adir is a directory: give a file path"},
		{filepath.Join("afile", "aiperf"), "afile is not a directory"},
	} {
		inv := cliBinary(t, dir, "--install-completion", "--shell", "bash", "-o", c.out)
		assert.Equal(t, ExitUsage, inv.code, "%s: %s", c.out, inv.stderr)
		assert.Contains(t, inv.stderr, c.want, c.out)
		assert.Empty(t, inv.stdout, c.out)
	}
	assertFIFO(t, filepath.Join(dir, "fifo"))
	assert.DirExists(t, filepath.Join(dir, "adir"))

	inv := cliBinary(t, dir, "--install-completion", "--shell", "bash", "-o", "afile")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	b, err := os.ReadFile(filepath.Join(dir, "afile"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "# bash completion for aiperf", "an existing completion file is replaced")
}

// TestCompletionInstallXDG: the default paths are where bash-completion
// and fish look: $BASH_COMPLETION_USER_DIR/completions (its first absolute
// directory), else $XDG_DATA_HOME/bash-completion/completions; fish's
// $XDG_CONFIG_HOME/fish/completions. A relative XDG value is ignored (the
// XDG spec calls it invalid) for the default under $HOME; zsh's path is
// ~/.zfunc whatever XDG says.
func TestCompletionInstallXDG(t *testing.T) {
	home, xdg := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	for _, c := range []struct {
		shell, bashDir, data, config, want string
	}{
		{"bash", "", filepath.Join(xdg, "data"), "", filepath.Join(xdg, "data", "bash-completion", "completions", "aiperf")},
		{"bash", "relative:" + filepath.Join(xdg, "bc"), filepath.Join(xdg, "data"), "", filepath.Join(xdg, "bc", "completions", "aiperf")},
		{"bash", "", "relative/data", "", filepath.Join(home, ".local", "share", "bash-completion", "completions", "aiperf")},
		{"fish", "", "", filepath.Join(xdg, "config"), filepath.Join(xdg, "config", "fish", "completions", "aiperf.fish")},
		{"fish", "", "", "relative/config", filepath.Join(home, ".config", "fish", "completions", "aiperf.fish")},
		{"zsh", "", filepath.Join(xdg, "data"), filepath.Join(xdg, "config"), filepath.Join(home, ".zfunc", "_aiperf")},
	} {
		t.Setenv("BASH_COMPLETION_USER_DIR", c.bashDir)
		t.Setenv("XDG_DATA_HOME", c.data)
		t.Setenv("XDG_CONFIG_HOME", c.config)
		inv := cli(t, home, "--install-completion", "--shell", c.shell)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		assert.Contains(t, inv.stdout, "wrote the "+c.shell+" completion of aiperf to "+c.want+"\n", c)
		assert.FileExists(t, c.want)
	}
}

// TestCompletionAdviceAbsolutePaths: with a relative -o the advice names
// the file by its absolute path (a startup file is read from elsewhere):
// bash sources it from another directory and has aiperf's completion.
// zsh's compinit autoloads from $fpath only a file named _aiperf: for one
// so named the advice puts its (absolute) directory on $fpath; for another
// name it says so and sources the file after compinit.
func TestCompletionAdviceAbsolutePaths(t *testing.T) {
	dir := t.TempDir()
	inv := cli(t, dir, "--install-completion", "--shell", "bash", "-o", filepath.Join("comp", "a.bash"))
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	abs := filepath.Join(dir, "comp", "a.bash")
	assert.Contains(t, inv.stdout, "load it from your shell's startup file: source "+abs+"\n")
	bash := shellOrSkip(t, "bash")
	assert.Equal(t, []string{"complete -o bashdefault -o default -F _aiperf aiperf"},
		runShell(t, bash, "-c", `cd / && source "$1" && complete -p aiperf`, "bash", abs))

	inv = cli(t, dir, "--install-completion", "--shell", "zsh", "-o", filepath.Join("zf", "_aiperf"))
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "  fpath=("+filepath.Join(dir, "zf")+" $fpath)\n")

	inv = cli(t, dir, "--install-completion", "--shell", "zsh", "-o", filepath.Join("zf", "aiperf.zsh"))
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "only from a file named _aiperf, and this one is named aiperf.zsh")
	assert.Contains(t, inv.stdout, "  autoload -Uz compinit && compinit\n  source "+filepath.Join(dir, "zf", "aiperf.zsh")+"\n")
	assert.NotContains(t, inv.stdout, "fpath=(")
}
