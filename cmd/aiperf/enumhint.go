package main

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// kongEnum is kong's message for a value outside a flag's enum.
var kongEnum = regexp.MustCompile(`^(--[\w-]+) must be one of (.*) but got ("(?:[^"\\]|\\.)*")$`)

// parseMessage words a parse error for the console: an AIPerf option or
// command not built here says why and what to use instead
// (notBuiltMessage), and a value outside a flag's choices is listed as the
// other choices are (the empty default left out, no quotes) with the
// closest choices proposed.
func parseMessage(err error) string {
	if msg, ok := notBuiltMessage(err); ok {
		return msg
	}
	msg := err.Error()
	m := kongEnum.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	got, uerr := strconv.Unquote(m[3])
	if uerr != nil {
		return msg
	}
	var choices []string
	for _, q := range strings.Split(m[2], ",") {
		if c, err := strconv.Unquote(q); err == nil && c != "" {
			choices = append(choices, c)
		}
	}
	return m[1] + " must be one of " + strings.Join(choices, ", ") + ", got " + m[3] + suggestChoice(got, choices)
}

// suggestChoice proposes the choices of four or more letters that got
// contains ("chat" and "completions" for "chat-completions", whose route
// is chat's), else the closest (plan.Suggest).
func suggestChoice(got string, choices []string) string {
	var within []string
	for _, c := range choices {
		if len(c) >= 4 && strings.Contains(strings.ToLower(got), c) {
			within = append(within, c)
		}
	}
	if len(within) == 0 {
		return plan.Suggest(got, choices)
	}
	quoted := make([]string, 0, len(within))
	for _, c := range within[:min(3, len(within))] {
		quoted = append(quoted, strconv.Quote(c))
	}
	last := len(quoted) - 1
	if last == 0 {
		return " (did you mean " + quoted[0] + "?)"
	}
	return " (did you mean " + strings.Join(quoted[:last], ", ") + " or " + quoted[last] + "?)"
}

// groupWithoutCommand reports whether err is kong's refusal of a command
// group given without one of its commands ("aiperf runs": expected one of
// "list", "show", ...), whose help then lists them with what each does.
func groupWithoutCommand(err error) bool {
	var pe *kong.ParseError
	if !errors.As(err, &pe) || pe.Context == nil {
		return false
	}
	sel := pe.Context.Selected()
	return sel != nil && len(sel.Children) > 0 && strings.HasPrefix(err.Error(), "expected ")
}
