package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeCompletionFor runs `aiperf --install-completion --shell SHELL -o
// PATH` and returns PATH.
func writeCompletionFor(t *testing.T, dir, shell string) string {
	t.Helper()
	path := filepath.Join(dir, "completion."+shell)
	inv := cli(t, dir, "--install-completion", "--shell", shell, "-o", path)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "wrote the "+shell+" completion of aiperf to "+path)
	require.FileExists(t, path)
	return path
}

// shellOrSkip is the shell's binary, or the subtest is skipped with a
// message saying so.
func shellOrSkip(t *testing.T, shell string) string {
	t.Helper()
	bin, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("%s is not installed: its completion script is not checked", shell)
	}
	return bin
}

// runShell runs a script in shell and returns its output, one line per
// completion.
func runShell(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", bin, strings.Join(args, " "), out)
	var lines []string
	if strings.TrimSpace(string(out)) == "" {
		return nil
	}
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		lines = append(lines, strings.SplitN(l, "\t", 2)[0]) // fish: name<TAB>description
	}
	return lines
}

// bashComplete drives the bash script's completion function as bash does
// for the words (the last is the one being completed).
func bashComplete(t *testing.T, bin, script string, words ...string) []string {
	t.Helper()
	return runShell(t, bin, append([]string{"-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); ` +
		`_aiperf; printf '%s\n' "${COMPREPLY[@]}"`, "bash", script, "aiperf"}, words...)...)
}

// zshComplete calls the zsh script's _aiperf with zsh's completion
// builtins stood in for by functions that print what they are given.
func zshComplete(t *testing.T, bin, script string, words ...string) []string {
	t.Helper()
	stubs := `compdef() { :; }; compset() { :; }; _files() { print FILES; }
compadd() { while [[ $1 == -* ]]; do [[ $1 == -a ]] && { print -rl -- "${(@P)2}"; return; }; shift; done; }
_describe() { local x; for x in "${(@P)4}"; do [[ ${x%%:*} == "${words[CURRENT]}"* ]] && print -r -- "${x%%:*}"; done; }
source "$1"; shift; words=(aiperf "$@"); CURRENT=$#words; _aiperf; true`
	return runShell(t, bin, append([]string{"-f", "-c", stubs, "zsh", script}, words...)...)
}

// TestCompletionScripts: `aiperf --install-completion` writes, for each
// shell, a script the shell accepts (bash -n, zsh -n, fish -n; a shell
// that is not installed is skipped), generated from the command tree:
// `aiperf pro<TAB>` completes to profile, a flag's enum values and
// subcommands complete, --install-completion's own flags too.
func TestCompletionScripts(t *testing.T) {
	dir := t.TempDir()
	scripts := map[string]string{}
	for _, sh := range completionShells {
		scripts[sh] = writeCompletionFor(t, dir, sh)
	}
	t.Run("bash", func(t *testing.T) {
		bin := shellOrSkip(t, "bash")
		runShell(t, bin, "-n", scripts["bash"])
		assert.Equal(t, []string{"profile"}, bashComplete(t, bin, scripts["bash"], "pro"))
		assert.Equal(t, []string{"plan", "plot", "plugins"}, bashComplete(t, bin, scripts["bash"], "--store", "x.db", "pl"))
		assert.Equal(t, []string{"light", "dark"}, bashComplete(t, bin, scripts["bash"], "plot", "--theme", ""))
		assert.Equal(t, []string{"none"}, bashComplete(t, bin, scripts["bash"], "profile", "--ui", "=", "n"))
		assert.ElementsMatch(t, []string{"--no-dashboard", "--no-verbose", "--no-mlflow-upload"},
			bashComplete(t, bin, scripts["bash"], "plot", "--no-"))
		assert.Equal(t, []string{"list", "show", "export", "delete", "sweeps"}, bashComplete(t, bin, scripts["bash"], "runs", ""))
		assert.Equal(t, []string{"bash", "zsh", "fish"},
			bashComplete(t, bin, scripts["bash"], "--install-completion", "--shell", ""))
		assert.Equal(t, []string{"--endpoint-type", "--endpoint"},
			bashComplete(t, bin, scripts["bash"], "profile", "-m", "x", "--endpoint"), "-m's value skipped")
		assert.Empty(t, bashComplete(t, bin, scripts["bash"], "profile", "--install-c"),
			"--install-completion is the root's alone")
	})
	t.Run("zsh", func(t *testing.T) {
		bin := shellOrSkip(t, "zsh")
		runShell(t, bin, "-n", scripts["zsh"])
		assert.Equal(t, []string{"profile"}, zshComplete(t, bin, scripts["zsh"], "pro"))
		assert.Equal(t, []string{"light", "dark"}, zshComplete(t, bin, scripts["zsh"], "plot", "--theme", ""))
		assert.Equal(t, []string{"FILES"}, zshComplete(t, bin, scripts["zsh"], "plot", "--config", ""))
	})
	t.Run("fish", func(t *testing.T) {
		bin := shellOrSkip(t, "fish")
		runShell(t, bin, "-n", scripts["fish"])
		complete := func(line string) []string {
			return runShell(t, bin, "-c", "source $argv[1]; complete -C $argv[2]", scripts["fish"], line)
		}
		assert.Equal(t, []string{"profile"}, complete("aiperf pro"))
		assert.Equal(t, []string{"dark", "light"}, complete("aiperf plot --theme "))
		assert.Equal(t, []string{"--theme=dark"}, complete("aiperf plot --theme=d"))
	})
}

// TestCompletionInstall: without --shell the shell is $SHELL's, and the
// script goes to its usual place under $HOME, with what the shell needs
// said; a shell with no completion exits 2 naming --shell; the flag after
// a command is refused.
func TestCompletionInstall(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, c := range []struct{ shell, path, says string }{
		{"/bin/bash", ".local/share/bash-completion/completions/aiperf", "bash-completion"},
		{"/usr/bin/zsh", ".zfunc/_aiperf", "fpath=(" + filepath.Join(home, ".zfunc") + " $fpath)"},
		{"/usr/local/bin/fish", ".config/fish/completions/aiperf.fish", "fish loads it"},
	} {
		t.Setenv("SHELL", c.shell)
		inv := cli(t, home, "--install-completion")
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		assert.Contains(t, inv.stdout, "to "+filepath.Join(home, c.path))
		assert.Contains(t, inv.stdout, c.says)
		assert.FileExists(t, filepath.Join(home, c.path))
	}

	t.Setenv("SHELL", "/bin/tcsh")
	bad := cli(t, home, "--install-completion")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "$SHELL is /bin/tcsh, a shell with no completion here: give --shell bash, zsh or fish")
	bad = cli(t, home, "--install-completion", "--shell", "tcsh")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "--shell must be one of bash, zsh, fish")
	bad = cli(t, home, "plot", "--install-completion")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "--install-completion comes first")

	help := cli(t, home, "--help")
	assert.Contains(t, help.stdout, "--install-completion")
}
