package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/notbuilt"
)

// The flag-parity test holds `aiperf profile` to AIPerf's documented option
// list (testdata/aiperf_profile_options.txt, a snapshot of AIPerf's
// docs/cli-options.md): every name AIPerf documents is accepted by our
// command line, or is on the not-built list (package notbuilt, whose
// reasons the command line gives) with the issue that covers it, why it
// never will be, or what it is when no issue covers it yet.
const (
	parityOptionsFile     = "testdata/aiperf_profile_options.txt"
	parityUnsupportedFile = notbuilt.File
)

// aiperfOption is one documented option: its section and its names (the
// first is AIPerf's, the rest its aliases).
type aiperfOption struct {
	section string
	names   []string
}

// unsupportedEntry is one line of the not-supported list.
type unsupportedEntry struct {
	line   int
	reason string
}

// reasonRe is how a not-built entry's reason starts (notbuilt.Entry's
// Status, then its why): the issue that covers the option, n/a, or not
// built.
var reasonRe = regexp.MustCompile(`^(issue (\d+)|n/a|not built): \S`)

func readAIPerfOptions(t *testing.T) []aiperfOption {
	t.Helper()
	var opts []aiperfOption
	eachDataLine(t, parityOptionsFile, func(n int, line string) {
		section, names, ok := strings.Cut(line, "\t")
		if !ok || len(strings.Fields(names)) == 0 {
			t.Fatalf("%s:%d: want <section><TAB><names>, got %q", parityOptionsFile, n, line)
		}
		opts = append(opts, aiperfOption{section: section, names: strings.Fields(names)})
	})
	if len(opts) < 200 {
		t.Fatalf("%s: only %d options read", parityOptionsFile, len(opts))
	}
	return opts
}

// readUnsupported is the not-built list's options (its commands are held
// to being refused by TestNotBuiltOptionsAndCommandsSayWhy).
func readUnsupported(t *testing.T) map[string]unsupportedEntry {
	t.Helper()
	entries, err := notbuilt.All()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]unsupportedEntry{}
	for _, e := range entries {
		if e.Option() {
			out[e.Name] = unsupportedEntry{line: e.Line, reason: e.Status + ": " + e.Why}
		}
	}
	return out
}

// eachDataLine calls fn with every line of file that is not blank or a
// # comment.
func eachDataLine(t *testing.T, file string, fn func(n int, line string)) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " ")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fn(n, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// profileFlagNames is every name `aiperf profile` accepts, read from the
// kong model: long names, aliases, negations (--no-x) and shorts (-v),
// with -vv for a counter -v.
func profileFlagNames(t *testing.T) map[string]bool {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("aiperf"))
	if err != nil {
		t.Fatal(err)
	}
	var profile *kong.Node
	for _, c := range parser.Model.Children {
		if c.Name == "profile" {
			profile = c
		}
	}
	if profile == nil {
		t.Fatal("no profile command in the kong model")
	}
	names := map[string]bool{}
	for _, group := range profile.AllFlags(false) {
		for _, f := range group {
			names["--"+f.Name] = true
			for _, a := range f.Aliases {
				names["--"+a] = true
			}
			if neg := f.Tag.Negatable; neg != "" {
				if neg == "_" { // kong's placeholder for the default negation
					neg = "no-" + f.Name
				}
				names["--"+neg] = true
			}
			if f.Short != 0 {
				names["-"+string(f.Short)] = true
				if f.Tag.Type == "counter" {
					names["-"+string(f.Short)+string(f.Short)] = true
				}
			}
		}
	}
	return names
}

// parityCategory is the bucket a not-supported reason falls in: its issue
// number, or n/a.
func parityCategory(reason string) string {
	m := reasonRe.FindStringSubmatch(reason)
	if m == nil {
		return "?"
	}
	if m[2] != "" {
		return "issue " + m[2]
	}
	return m[1]
}

// parityResult is what comparing AIPerf's option list with our names
// finds.
type parityResult struct {
	unlisted []string            // documented, not accepted, not listed: "--name (Section)"
	stale    []string            // listed but accepted, or listed but not documented
	missing  map[string][]string // category -> listed names
	options  int                 // documented options
	complete int                 // of them, accepted under every name
}

func compareParity(opts []aiperfOption, unsupported map[string]unsupportedEntry, accepted map[string]bool) parityResult {
	r := parityResult{missing: map[string][]string{}, options: len(opts)}
	documented := map[string]bool{}
	for _, o := range opts {
		all := true
		for _, name := range o.names {
			documented[name] = true
			e, listed := unsupported[name]
			all = all && accepted[name]
			switch {
			case accepted[name] && listed:
				r.stale = append(r.stale, fmt.Sprintf("%s:%d: %s is accepted now: take it off the not-supported list",
					parityUnsupportedFile, e.line, name))
			case !accepted[name] && !listed:
				r.unlisted = append(r.unlisted, fmt.Sprintf("%s (%s)", name, o.section))
			case listed:
				c := parityCategory(e.reason)
				r.missing[c] = append(r.missing[c], name)
			}
		}
		if all {
			r.complete++
		}
	}
	for name, e := range unsupported {
		if !documented[name] {
			r.stale = append(r.stale, fmt.Sprintf("%s:%d: %s is not an option in %s",
				parityUnsupportedFile, e.line, name, parityOptionsFile))
		}
	}
	sort.Strings(r.stale)
	return r
}

// TestAIPerfFlagParity fails when an option AIPerf documents for `aiperf
// profile` is neither accepted nor on the justified not-supported list, and
// when a not-supported entry is accepted after all (the list shrinks as
// flags land) or names no documented option.
func TestAIPerfFlagParity(t *testing.T) {
	r := compareParity(readAIPerfOptions(t), readUnsupported(t), profileFlagNames(t))
	if len(r.unlisted) > 0 {
		t.Errorf("AIPerf's profile options neither accepted nor on %s (add the flag, or list it with the issue that covers it):\n  %s",
			parityUnsupportedFile, strings.Join(r.unlisted, "\n  "))
	}
	for _, s := range r.stale {
		t.Error(s)
	}
	cats := make([]string, 0, len(r.missing))
	total := 0
	for c, names := range r.missing {
		cats = append(cats, c)
		total += len(names)
	}
	sort.Strings(cats)
	var summary []string
	for _, c := range cats {
		summary = append(summary, fmt.Sprintf("%s: %d", c, len(r.missing[c])))
	}
	t.Logf("%d of AIPerf's %d profile options accepted under every name; %d names not supported (%s)",
		r.complete, r.options, total, strings.Join(summary, ", "))
}

// TestAIPerfFlagParityCatchesGaps checks the check: the model's own names
// are found, and an undocumented gap, a stale entry and a listed name that
// AIPerf does not document are each reported.
func TestAIPerfFlagParityCatchesGaps(t *testing.T) {
	accepted := profileFlagNames(t)
	for _, name := range []string{"--model", "-m", "--model-names", "--url", "-vv", "--isl", "--no-server-metrics"} {
		if !accepted[name] {
			t.Errorf("%s: not found in the profile command's kong model", name)
		}
	}
	if accepted["--no-such-aiperf-flag"] {
		t.Error("--no-such-aiperf-flag: found in the model")
	}
	opts := []aiperfOption{{section: "Endpoint", names: []string{"--model", "--gap"}}, {section: "X", names: []string{"--later", "--unbuilt"}}}
	r := compareParity(opts, map[string]unsupportedEntry{
		"--model": {line: 3, reason: "issue 25: x"}, "--later": {line: 4, reason: "issue 26: y"}, "--gone": {line: 5, reason: "n/a: z"},
		"--unbuilt": {line: 6, reason: "not built: w"},
	}, accepted)
	if !slices.Equal(r.unlisted, []string{"--gap (Endpoint)"}) {
		t.Errorf("unlisted = %q, want the one gap", r.unlisted)
	}
	if len(r.stale) != 2 || !strings.Contains(r.stale[0], "--model is accepted now") || !strings.Contains(r.stale[1], "--gone is not an option") {
		t.Errorf("stale = %q, want --model (accepted) and --gone (undocumented)", r.stale)
	}
	if !slices.Equal(r.missing["issue 26"], []string{"--later"}) || !slices.Equal(r.missing["not built"], []string{"--unbuilt"}) || r.complete != 0 {
		t.Errorf("missing = %v, complete = %d", r.missing, r.complete)
	}
}
