package main

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/notbuilt"
)

// kongUnknown is kong's message for a flag or a command word that the
// command line does not have (with its own "did you mean" after a comma).
var kongUnknown = regexp.MustCompile(`^(unknown flag|unexpected argument) ([^\s,]+)`)

// tutorialSpellings are flags that AIPerf's tutorials write but that
// neither AIPerf nor this client has (arrival-patterns.md, ramping.md),
// each with the option AIPerf and this client do have.
var tutorialSpellings = map[string]string{
	"--output-dir": "--artifact-dir",
	"--duration":   "--benchmark-duration",
}

// notBuiltMessage words kong's error for a name it does not know when the
// name is AIPerf's: an option or command AIPerf has that this client does
// not build is refused with why and what to use instead (package
// notbuilt), and a tutorial's spelling that no AIPerf has gets the option
// meant. Anything else is left to kong's message (ok false).
func notBuiltMessage(err error) (string, bool) {
	var pe *kong.ParseError
	if !errors.As(err, &pe) || pe.Context == nil {
		return "", false
	}
	m := kongUnknown.FindStringSubmatch(err.Error())
	if m == nil {
		return "", false
	}
	kind, name := m[1], m[2]
	if kind == "unexpected argument" && pe.Context.Selected() != nil {
		return "", false // a word after a command (its argument), not a command of aiperf's
	}
	if e, ok := notbuilt.Lookup(name); ok && e.Option() == (kind == "unknown flag") {
		return e.Refusal(), true
	}
	if meant, ok := tutorialSpellings[name]; ok && kind == "unknown flag" && hasFlag(pe.Context, meant) {
		return fmt.Sprintf("unknown flag %s, did you mean %q? (some of AIPerf's tutorials write %s, which AIPerf does not accept either)",
			name, meant, name), true
	}
	return "", false
}

// hasFlag reports whether the command being parsed takes the long flag
// name, under its name or an alias.
func hasFlag(ctx *kong.Context, name string) bool {
	for _, f := range ctx.Flags() {
		if "--"+f.Name == name || slices.ContainsFunc(f.Aliases, func(a string) bool { return "--"+a == name }) {
			return true
		}
	}
	return false
}
