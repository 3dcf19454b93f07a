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
	Output string `name:"output" short:"o" placeholder:"PATH" help:"Where the script is written (default: the shell's completions directory: bash ~/.local/share/bash-completion/completions/aiperf, zsh ~/.zfunc/_aiperf, fish ~/.config/fish/completions/aiperf.fish)."`
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
		home, err := os.UserHomeDir()
		if err != nil {
			return usageErr(fmt.Errorf("no home directory to install the %s completion in (%w): give -o PATH", shell, err))
		}
		out = defaultCompletionPath(shell, home)
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

// defaultCompletionPath is where shell looks for a user's completions.
func defaultCompletionPath(shell, home string) string {
	switch shell {
	case "zsh":
		return filepath.Join(home, ".zfunc", "_aiperf")
	case "fish":
		return filepath.Join(home, ".config", "fish", "completions", "aiperf.fish")
	}
	return filepath.Join(home, ".local", "share", "bash-completion", "completions", "aiperf")
}

// writeCompletion writes the script (its directory made), replacing any.
func writeCompletion(path, script string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("install the completion: -o %s: %w", path, err)
	}
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		return fmt.Errorf("install the completion: -o %s: %w", path, err)
	}
	return nil
}

// completionAdvice says what the shell needs to load the script.
func completionAdvice(w io.Writer, shell, path string, conventional bool) {
	switch {
	case shell == "zsh":
		fmt.Fprintf(w, "zsh loads it from a directory on $fpath: add these lines to ~/.zshrc (before any compinit), then start a new shell:\n"+
			"  fpath=(%s $fpath)\n  autoload -Uz compinit && compinit\n", filepath.Dir(path))
	case !conventional:
		fmt.Fprintf(w, "load it from your shell's startup file: source %s\n", path)
	case shell == "bash":
		fmt.Fprintln(w, "bash-completion (2.8 or later) loads it in new shells; without bash-completion, add to ~/.bashrc: source "+path)
	default:
		fmt.Fprintln(w, "fish loads it in new shells")
	}
}
