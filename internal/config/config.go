package config

import (
	"bytes"
	"cmp"
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
	// Runtime is what the body's runtime: section sets that is an option
	// of the command rather than of the benchmark (zero without one).
	Runtime Runtime
	name    string // the file's name, as its errors give it
}

// Runtime is what a file's runtime: section (AIPerf's RuntimeConfig) sets
// that this client has: the progress display and the cap on worker
// processes. Its other keys are AIPerf's own process tuning, read and
// ignored with a note, or refused.
type Runtime struct {
	// UI is runtime.ui as --ui takes it (none, simple, dashboard); "" when
	// the file does not set it.
	UI string
	// WorkersMax is runtime.workers: AIPerf's total of worker processes,
	// the value its --workers-max sets, and so --workers-max here (0 when
	// not set).
	WorkersMax int
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

// MaxFileBytes bounds a config file: it is read whole and parsed into a
// node per value before maxValues can be checked (as
// starlark.MaxScriptBytes bounds a script). Parsing costs about 2 s and
// 200 MB per MiB of densely packed values, so the cap is far below the
// Starlark one; 100,000 values and a long prompt or template fit in it.
const MaxFileBytes = 1 << 20

// Load reads the YAML config file at path, refusing one of more than
// MaxFileBytes without reading the rest of it. The error joins one *Error
// per problem found.
func Load(path string) (*File, error) {
	data, err := inputfile.ReadFileMax(path, MaxFileBytes)
	if tl := (*inputfile.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, fmt.Errorf("read config: %w, %s", err, tooLarge)
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data)
}

// tooLarge says what to do about a file over MaxFileBytes.
const tooLarge = "the most a config file may be: keep data out of the config (datasets, traces and prompts go in the files it names)"

// maxValues bounds the values a file may hold (once its aliases are
// followed, so that a few nested anchors cannot expand into billions).
const maxValues = 100_000

// ReadTree parses data into its one YAML document's root node, refusing
// what the reader cannot use: more than MaxFileBytes, a syntax error, no
// or several documents, more than maxValues values (aliases followed).
func ReadTree(name string, data []byte) (*yaml.Node, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{File: name, Line: 1, Msg: fmt.Sprintf("the file is larger than %d MiB, %s", MaxFileBytes>>20, tooLarge)}
	}
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
	if c := countValues(root); c.n > maxValues {
		msg := fmt.Sprintf("the file holds more than %d values, the most a config file may hold: "+
			"keep data out of the config (datasets, traces and prompts go in the files it names)", maxValues)
		if c.aliases {
			msg = fmt.Sprintf("the file holds more than %d values once its aliases (*name) are followed, "+
				"the most a config file may hold: write the values out, or alias fewer of them", maxValues)
		}
		return nil, &Error{File: name, Line: c.line, Msg: msg}
	}
	return root, nil
}

// valueCount is what countValues found: how many values (up to
// maxValues+1), whether an alias was followed, and the line where the
// count passed maxValues (the alias being followed, when inside one).
type valueCount struct {
	n       int
	aliases bool
	line    int
}

// countValues counts the nodes under n with aliases followed, stopping
// once past maxValues: it visits at most maxValues+1 nodes, whatever the
// aliases (a cycle among them included) would expand to.
func countValues(n *yaml.Node) valueCount {
	var c valueCount
	c.walk(n, 0)
	return c
}

// walk counts n and what it holds; alias is the line of the outermost
// alias being followed (0 outside one).
func (c *valueCount) walk(n *yaml.Node, alias int) {
	if n == nil || c.n > maxValues {
		return
	}
	c.n++
	if c.n > maxValues {
		c.line = cmp.Or(alias, n.Line, 1)
		return
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		c.aliases = true
		c.walk(n.Alias, cmp.Or(alias, n.Line))
	}
	for _, child := range n.Content {
		c.walk(child, alias)
	}
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
	env := d.takeEnvelope(root)
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

// yamlParserErrors are yaml.v3's parser errors. It counts their line from
// 0, where its scanner's are counted from 1, and gives where the mapping or
// sequence being parsed begins (when that is not the first line), so the
// mistake is on that line or below it: an unclosed "{" is its line, a stray
// "}" may be lines down.
var yamlParserErrors = []string{"did not find expected node content", "did not find expected key",
	"did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected '-' indicator"}

// syntaxError turns "yaml: line N: msg" into an *Error at line N. yaml.v3
// leaves the line out when the problem is on the first line, and for bad
// bytes (invalid UTF-8, control characters), which are found here instead.
func syntaxError(name string, data []byte, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		msg := m[2]
		if slices.Contains(yamlParserErrors, msg) {
			line++
			msg += " (in what begins on this line: the mistake is here or below)"
		}
		return &Error{File: name, Line: line, Msg: "invalid YAML: " + msg}
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
