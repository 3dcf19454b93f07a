package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/starter"
)

// `aiperf --install-completion [--shell bash|zsh|fish] [-o PATH]`, AIPerf's
// (cyclopts') flag: a completion script generated from the command tree
// (commands, subcommands, flags, their choices), written to -o or the
// shell's usual place for a user's completions. No startup file is edited:
// what the shell needs, if anything, is printed.

// completionShells are the shells a script is generated for.
var completionShells = []string{"bash", "zsh", "fish"}

// InstallCompletionCmd is `aiperf --install-completion`, which run()
// turns into this hidden command so that its flags parse as a command's.
type InstallCompletionCmd struct {
	Shell  string `name:"shell" enum:",bash,zsh,fish" default:"" placeholder:"SHELL" help:"bash, zsh or fish (default: the shell $SHELL names)."`
	Output string `name:"output" short:"o" placeholder:"PATH" help:"Where the script is written (default: the shell's completions directory: bash $BASH_COMPLETION_USER_DIR/completions/aiperf, else $XDG_DATA_HOME/bash-completion/completions/aiperf ($XDG_DATA_HOME: ~/.local/share when unset); zsh ~/.zfunc/_aiperf; fish $XDG_CONFIG_HOME/fish/completions/aiperf.fish (~/.config when unset))."`
}

// installCompletionFlag is --install-completion in the help. run() takes
// it when it comes before any command; anywhere else it is refused here.
type installCompletionFlag bool

// BeforeReset refuses --install-completion after a command.
func (installCompletionFlag) BeforeReset() error {
	return errors.New("--install-completion comes first: aiperf --install-completion [--shell bash|zsh|fish] [-o PATH]")
}

// completionArgs turns `aiperf [global flags] --install-completion ...`
// into the hidden install-completion command.
func completionArgs(args []string) []string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--install-completion":
			return slices.Concat(args[:i], []string{"install-completion"}, args[i+1:])
		case a == "--store":
			i++ // its value
		case strings.HasPrefix(a, "--store=") || a == "--wide":
		default:
			return args
		}
	}
	return args
}

// Run writes the script and says where, and what the shell needs.
func (c *InstallCompletionCmd) Run(g *Globals, k *kong.Context) error {
	shell, err := completionShell(c.Shell, os.Getenv("SHELL"))
	if err != nil {
		return usageErr(err)
	}
	script := completionScript(shell, completionTree(k.Model))
	out := c.Output
	if out == "" {
		if out, err = defaultCompletionPath(shell, os.Getenv); err != nil {
			return usageErr(err)
		}
	}
	if err := writeCompletion(out, script); err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "wrote the %s completion of aiperf to %s\n", shell, out)
	completionAdvice(g.Stdout, shell, out, c.Output == "")
	return nil
}

// completionShell is shell, else the one $SHELL names.
func completionShell(shell, env string) (string, error) {
	if shell != "" {
		return shell, nil
	}
	name := filepath.Base(strings.TrimSpace(env))
	switch {
	case env == "":
		return "", errors.New("$SHELL is not set, so the shell is unknown: give --shell bash, zsh or fish")
	case !slices.Contains(completionShells, name):
		return "", fmt.Errorf("$SHELL is %s, a shell with no completion here: give --shell bash, zsh or fish", env)
	}
	return name, nil
}

// completionScript is shell's script for the command tree.
func completionScript(shell string, nodes []*compNode) string {
	switch shell {
	case "zsh":
		return zshScript(nodes)
	case "fish":
		return fishScript(nodes)
	}
	return bashScript(nodes)
}

// defaultCompletionPath is where shell looks for a user's completions:
// bash-completion in $BASH_COMPLETION_USER_DIR/completions (its first
// absolute directory), else in $XDG_DATA_HOME/bash-completion/completions;
// fish in $XDG_CONFIG_HOME/fish/completions; zsh has no such place, so
// ~/.zfunc, which the printed advice puts on $fpath. An XDG variable that
// is unset, empty or relative is ignored, as the XDG Base Directory
// specification says, for its default under the home directory.
func defaultCompletionPath(shell string, getenv func(string) string) (string, error) {
	if shell == "bash" {
		for dir := range strings.SplitSeq(getenv("BASH_COMPLETION_USER_DIR"), ":") {
			if filepath.IsAbs(dir) {
				return filepath.Join(dir, "completions", "aiperf"), nil
			}
		}
	}
	xdg := map[string]string{"bash": "XDG_DATA_HOME", "fish": "XDG_CONFIG_HOME"}[shell]
	if dir := getenv(xdg); xdg != "" && filepath.IsAbs(dir) {
		return completionUnder(shell, dir), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory to install the %s completion in (%w): give -o PATH", shell, err)
	}
	switch shell {
	case "zsh":
		return filepath.Join(home, ".zfunc", "_aiperf"), nil
	case "fish":
		return completionUnder(shell, filepath.Join(home, ".config")), nil
	}
	return completionUnder(shell, filepath.Join(home, ".local", "share")), nil
}

// completionUnder is the completion's path under the XDG base directory
// shell's completions live in: bash-completion's data, fish's config.
func completionUnder(shell, base string) string {
	if shell == "fish" {
		return filepath.Join(base, "fish", "completions", "aiperf.fish")
	}
	return filepath.Join(base, "bash-completion", "completions", "aiperf")
}

// writeCompletion writes the script (its directory made), replacing a
// file there as the output-file rule does (outputfile): a named pipe, a
// socket, a directory or a block device is refused (exit 2) before it is
// opened, where opening a pipe would wait for a reader for ever.
func writeCompletion(path, script string) error {
	if err := checkOutputFile(path, "-o"); err != nil {
		return usageErr(fmt.Errorf("install the completion: %w", err))
	}
	if err := writeOutput(path, []byte(script)); err != nil {
		return fmt.Errorf("install the completion: %w", err)
	}
	return nil
}

// completionAdvice says what the shell needs to load the script, naming
// it by its absolute path (the startup file is read from another
// directory). zsh's compinit autoloads from $fpath only a file named for
// the function it defines, _aiperf: a file named otherwise is sourced
// after compinit, where the script registers itself with compdef.
func completionAdvice(w io.Writer, shell, path string, conventional bool) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	word := starter.ShellQuote(path)
	switch {
	case shell == "zsh" && filepath.Base(path) == "_aiperf":
		fmt.Fprintf(w, "zsh loads it from a directory on $fpath: add these lines to ~/.zshrc (before any compinit), then start a new shell:\n"+
			"  fpath=(%s $fpath)\n  autoload -Uz compinit && compinit\n", starter.ShellQuote(filepath.Dir(path)))
	case shell == "zsh":
		fmt.Fprintf(w, "zsh's compinit loads a completion from $fpath only from a file named _aiperf, and this one is named %s: "+
			"add these lines to ~/.zshrc (the first unless compinit is called there already), then start a new shell:\n"+
			"  autoload -Uz compinit && compinit\n  source %s\n"+
			"(or name the file _aiperf and put its directory on $fpath before compinit)\n", filepath.Base(path), word)
	case !conventional:
		fmt.Fprintf(w, "load it from your shell's startup file: source %s\n", word)
	case shell == "bash":
		fmt.Fprintln(w, "bash-completion (2.8 or later) loads it in new shells; without bash-completion, add to ~/.bashrc: source "+word)
	default:
		fmt.Fprintln(w, "fish loads it in new shells")
	}
}
