package dataset

import (
	"context"
	"fmt"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// wekaSource supplies the traces a weka set replays, by index: trace files
// read from disk (weka_trace, wekaFileSource) or traces converted in
// memory from another format (tracelab, traceLabSource). The set indexes
// every trace once when it is opened and reads a trace again when one of
// its conversations is sent, so a source need keep only what rebuilds it.
type wekaSource interface {
	// count is the number of traces.
	count() int
	// name names trace i in messages: its file.
	name(i int) string
	// read returns trace i, checked, and what keeping it parsed costs
	// (bytes, for wekaCache); ids asks for its calls' hash ids, which
	// indexing does not need (a source may then leave them out). Once ctx
	// is done it may stop with ctx's error.
	read(ctx context.Context, i int, ids bool) (tr wekaTrace, size int, err error)
}

// wekaFileSource is a weka_trace input: a trace file each, read and
// checked whole every time it is read.
type wekaFileSource struct {
	paths []string
	given string // Options.WekaBasis: absolute checks subagent times as it reads
}

func (s *wekaFileSource) count() int        { return len(s.paths) }
func (s *wekaFileSource) name(i int) string { return s.paths[i] }

func (s *wekaFileSource) read(ctx context.Context, i int, _ bool) (wekaTrace, int, error) {
	return readWekaFile(ctx, s.paths[i], s.given)
}

// readWekaFile reads and checks one trace file (every problem placed at its
// line), reading its subagent requests' times on basis given, or stops
// with ctx; size is the file's bytes.
func readWekaFile(ctx context.Context, path, given string) (wekaTrace, int, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return wekaTrace{}, 0, err
	}
	defer f.Close()
	data, err := readWeka(f, path)
	if err != nil {
		return wekaTrace{}, 0, err
	}
	tr, wps, more := parseWeka(ctx, data)
	if err := ctx.Err(); err != nil {
		return wekaTrace{}, 0, fmt.Errorf("%s dataset: stopped reading %s: %w", TypeWekaTrace, path, err)
	}
	if wps == nil && given == WekaBasisAbsolute {
		wps, more = absoluteProblems(tr, path)
	}
	if wps != nil {
		ps := problems{path: path, more: more}
		placeWeka(path, data, wps, &ps)
		return wekaTrace{}, 0, ps.err()
	}
	return tr, len(data), nil
}
