package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data)
}

// Parse is Load on data already read; name is used in error messages.
func Parse(name string, data []byte) (*File, error) {
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
	d := &decoder{file: name, lookupEnv: os.LookupEnv, fromEnv: map[*yaml.Node]bool{}, setAt: map[string]int{}}
	d.f.Profile = plan.NewProfile()
	root := doc.Content[0]
	d.substitute(root, "")
	sweep, multiRun, vars := envelope(root)
	d.variables(vars, root, sweep)
	if d.mapping(root, "") {
		d.fields(root, "", d.topFields())
	}
	d.multiRun(multiRun)
	if sweep != nil {
		typ, points := d.sweepPoints(sweep)
		if len(d.errs) == 0 {
			d.f.Sweep = &Sweep{Type: typ, Variations: d.variations(root, points)}
		}
	}
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	return &d.f, nil
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
