package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// File is what a config file describes.
type File struct {
	// Profile starts from plan.NewProfile() with the file's settings applied.
	Profile plan.Profile
	// ArtifactDir is benchmark.artifacts.dir as written ("" when absent).
	ArtifactDir string
	// Sweep is the sweep: section expanded (nil without one); Profile is
	// then the body without the sweep applied.
	Sweep *Sweep
	// MultiRun is the multi_run: section (NumRuns 0 without one).
	MultiRun MultiRun
	// Schema is the version of AIPerf's format the file is written in.
	Schema Schema
	// Notes are what the reader did that the user should know: an older
	// shape read (and how to rewrite it), a deprecated key that changes
	// nothing. Each names the file and line.
	Notes []string
	// Search is a sweep of type adaptive_search, as --search-* values (nil
	// without one; Sweep is then nil).
	Search *Search
	// Body is the benchmark: body as it was read: older shapes rewritten,
	// ${VAR} and {{ }} replaced (it may hold secrets).
	Body *yaml.Node
	// Keys is where the body sets each option (by its JSON name).
	Keys map[string]Key
	name string // the file's name, as its errors give it
}

// Key is where a file sets an option: its path as written
// (benchmark.dataset.prompts.isl) and line.
type Key struct {
	Path string
	Line int
}

// Where names a problem's field (a Profile JSON name, or phases[i].x) as
// the file sets it for sweep variation i (or the body, when i is out of
// the sweep): "FILE:LINE: PATH", or "" when the file does not set it.
func (f *File) Where(i int, field string) string {
	keys := f.Keys
	if f.Sweep != nil && i >= 0 && i < len(f.Sweep.Variations) {
		keys = f.Sweep.Variations[i].Keys
	}
	if k, ok := keys[field]; ok && k.Path != "" {
		return fmt.Sprintf("%s:%d: %s", f.name, k.Line, k.Path)
	}
	if rest, ok := strings.CutPrefix(field, "phases"); ok && strings.HasPrefix(rest, "[") {
		if k, ok := keys["phases"]; ok && k.Path != "" {
			return fmt.Sprintf("%s:%d: %s%s", f.name, k.Line, k.Path, rest)
		}
	}
	return ""
}

// Error is one problem in a config file.
type Error struct {
	File string
	Line int
	Path string // dotted key path such as "benchmark.endpoint.url" or "benchmark.phases[1].rate"; may be empty
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Path, e.Msg)
}

// Load reads the YAML config file at path. The error joins one *Error per
// problem found.
func Load(path string) (*File, error) {
	data, err := inputfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data)
}

// maxValues bounds the values a file may hold once its aliases are
// followed, so that a few nested anchors cannot expand into billions.
const maxValues = 100_000

// ReadTree parses data into its one YAML document's root node, refusing
// what the reader cannot use: a syntax error, no or several documents, a
// file whose aliases expand past maxValues.
func ReadTree(name string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Line: 1, Msg: "the file is empty"}
		}
		return nil, syntaxError(name, data, err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		line := next.Line
		if err != nil {
			return nil, syntaxError(name, data, err)
		}
		return nil, &Error{File: name, Line: line, Msg: "only one YAML document is allowed"}
	}
	root := doc.Content[0]
	if n := expandedSize(root, map[*yaml.Node]int{}); n > maxValues {
		return nil, &Error{File: name, Line: 1, Msg: fmt.Sprintf(
			"the file holds more than %d values once its aliases (*name) are followed: write the values out", maxValues)}
	}
	return root, nil
}

// expandedSize counts the nodes under n with aliases followed, each node
// counted once per path to it but computed once (memo), so it is linear.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int) int {
	if n == nil {
		return 0
	}
	if v, ok := memo[n]; ok {
		return v
	}
	memo[n] = maxValues + 1 // a cycle counts as too many
	total := 1
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		total = expandedSize(n.Alias, memo)
	}
	for _, c := range n.Content {
		total += expandedSize(c, memo)
		if total > maxValues {
			break
		}
	}
	memo[n] = min(total, maxValues+1)
	return memo[n]
}

// Parse is Load on data already read; name is used in error messages.
func Parse(name string, data []byte) (*File, error) {
	root, err := ReadTree(name, data)
	if err != nil {
		return nil, err
	}
	origin := map[*yaml.Node]string{}
	d := newDecoder(name, os.LookupEnv, origin)
	if !d.mapping(root, "") {
		return nil, errors.Join(d.errs...)
	}
	m := normalize(root)
	d.migrated, d.body.flat = m, m.schema == SchemaFlat
	d.notes = append(d.notes, m.notes(name)...)
	d.substitute(root, "")
	env := takeEnvelope(root)
	vars := d.resolveVariables(clone(env.variables, origin))
	d.multiRun(env.multiRun)
	d.body.seed42 = env.multiRun != nil && d.multiRunSeed == nil
	var points []point
	if env.sweep != nil {
		points = d.sweepPoints(env.sweep)
	}
	if d.convergenceNode != nil {
		d.convergence("multi_run.convergence", d.convergenceNode)
	}
	base := clone(root, origin)
	d.render(base, "", vars)
	d.f.Body = child(base, "benchmark")
	d.decodeTop(base)
	if _, set := d.setAt["random_seed"]; d.multiRunSeed != nil && !set {
		d.errorf(d.multiRunSeed, "multi_run.set_consistent_seed", "false without a random_seed is not supported yet: "+
			"every trial here draws the same workload; set random_seed")
	}
	switch {
	case d.f.Search != nil: // the search chooses its own points
	case env.sweep != nil && len(d.errs) == 0:
		s := d.sweepOpts
		s.Type, s.Variations = d.sweepType, d.variations(root, env.variables, points)
		d.f.Sweep = &s
	case env.sweep != nil:
		d.checkPoints(root, env.variables, points) // a path that does not resolve, said with the body's problems
	}
	if len(d.errs) > 0 {
		slices.SortStableFunc(d.errs, func(a, b error) int { return lineOf(a) - lineOf(b) }) // the file's order
		return nil, errors.Join(d.errs...)
	}
	d.f.Schema, d.f.Notes, d.f.Keys, d.f.name = m.schema, d.notes, d.setAt, name
	return &d.f, nil
}

// lineOf is an error's line (0 when it has none).
func lineOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Line
	}
	return 0
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns "yaml: line N: msg" into an *Error at line N. yaml.v3
// leaves the line out when the problem is on the first line, and for bad
// bytes (invalid UTF-8, control characters), which are found here instead.
func syntaxError(name string, data []byte, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: name, Line: line, Msg: "invalid YAML: " + m[2]}
	}
	return &Error{File: name, Line: badByteLine(data), Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}

// badByteLine is the line of the first byte YAML does not allow in a
// UTF-8 text (1 when there is none).
func badByteLine(data []byte) int {
	line := 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		switch {
		case r == utf8.RuneError && size <= 1, r < ' ' && r != '\t' && r != '\n' && r != '\r', r == 0x7f:
			return line
		case r == '\n':
			line++
		}
		data = data[size:]
	}
	return 1
}
