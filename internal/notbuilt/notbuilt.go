// Package notbuilt is the one list of AIPerf's command-line options and
// commands that this client deliberately does not build, each with why and
// what to use instead (aiperf.txt, embedded). The command line's parse
// errors, the config reader's refusals of the matching YAML keys and the
// flag-parity test all read it, so a reason is written once.
package notbuilt

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// File is the list's path in the repository, for messages about it.
const File = "internal/notbuilt/aiperf.txt"

//go:embed aiperf.txt
var text string

// Entry is one option or command of AIPerf's that is not built here.
type Entry struct {
	Name    string // "--hf-subset", or a command: "kube"
	Status  string // "issue N", "n/a" or "not built"
	Why     string // why it is not built
	Instead string // what to use instead
	Line    int    // its line in File
}

// Option reports whether e is an option of AIPerf's profile command (else
// it is a command).
func (e Entry) Option() bool { return strings.HasPrefix(e.Name, "-") }

// Explain is why e is not built and what to use instead, for a message
// that has already named it: "<why>; instead, <instead>".
func (e Entry) Explain() string { return e.Why + "; instead, " + e.Instead }

// Refusal is the command line's error for e: that it is AIPerf's, not
// built here, why, and what to use instead.
func (e Entry) Refusal() string {
	if e.Option() {
		return fmt.Sprintf("%s is an AIPerf option this client does not build: %s", e.Name, e.Explain())
	}
	return fmt.Sprintf("aiperf %s is an AIPerf command this client does not build: %s", e.Name, e.Explain())
}

// statusRe is how an entry's reason starts: the issue that covers it, n/a
// (it never will be built) or not built (no issue covers it yet).
var statusRe = regexp.MustCompile(`^(issue \d+|n/a|not built): (\S.*)$`)

// nameRe is an entry's name: a long option or a command word.
var nameRe = regexp.MustCompile(`^(--)?[a-z][a-z0-9-]*$`)

// list is File read once: its entries and the problems of its lines.
var list = sync.OnceValues(func() ([]Entry, error) { return parse(text) })

// All returns every entry in File's order, and an error naming each line
// that is not an entry (what its test checks).
func All() ([]Entry, error) { return list() }

// Lookup returns the entry named name ("--wandb-project", "kube").
func Lookup(name string) (Entry, bool) {
	entries, _ := list()
	for _, e := range entries {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Explain is Lookup(name)'s Explain, for a message about a YAML key that
// stands for a listed option; "" when name is not listed (its caller's
// tests name the options they explain).
func Explain(name string) string {
	if e, ok := Lookup(name); ok {
		return e.Explain()
	}
	return ""
}

// parse reads the list: blank lines and # comments are skipped; every
// other line is name, reason and instead, TAB-separated.
func parse(s string) ([]Entry, error) {
	var entries []Entry
	var problems []string
	seen := map[string]int{}
	for i, line := range strings.Split(s, "\n") {
		n := i + 1
		line = strings.TrimRight(line, " \r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseLine(line)
		if err == nil && seen[e.Name] > 0 {
			err = fmt.Errorf("%s is listed again (first on line %d)", e.Name, seen[e.Name])
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %v", File, n, err))
			continue
		}
		e.Line, seen[e.Name] = n, n
		entries = append(entries, e)
	}
	if len(problems) > 0 {
		return entries, fmt.Errorf("read the not-built list: %s", strings.Join(problems, "; "))
	}
	return entries, nil
}

// parseLine reads one entry.
func parseLine(line string) (Entry, error) {
	f := strings.Split(line, "\t")
	if len(f) != 3 {
		return Entry{}, fmt.Errorf("want <name><TAB><status>: <why><TAB><instead>, got %d field(s) in %q", len(f), line)
	}
	if !nameRe.MatchString(f[0]) {
		return Entry{}, fmt.Errorf("%q is neither a --long-option nor a command word", f[0])
	}
	m := statusRe.FindStringSubmatch(strings.TrimSpace(f[1]))
	if m == nil {
		return Entry{}, fmt.Errorf(`%s: the reason must read "issue N: why", "n/a: why" or "not built: why", got %q`, f[0], f[1])
	}
	instead := strings.TrimSpace(f[2])
	if instead == "" {
		return Entry{}, fmt.Errorf("%s: says nothing to use instead", f[0])
	}
	return Entry{Name: f[0], Status: m[1], Why: m[2], Instead: instead}, nil
}
