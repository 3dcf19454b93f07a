package dataset

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// The bases of a weka_trace's subagent request times
// (--weka-nested-timestamp-basis, AIPerf's).
const (
	// WekaBasisAuto reads the whole corpus as WekaBasisRelative when any
	// subagent request is more than 1 µs before its marker, else as
	// WekaBasisAbsolute (the default; Options.WekaBasis "").
	WekaBasisAuto = "auto"
	// WekaBasisAbsolute reads a subagent request's t on its root trace's
	// clock: one before its marker's t is an error (less than 1 µs before
	// it: clamped to it).
	WekaBasisAbsolute = "absolute"
	// WekaBasisRelative reads a subagent request's t from its marker's t.
	WekaBasisRelative = "relative"
)

// WekaBases lists the accepted Options.WekaBasis values ("" is
// WekaBasisAuto).
var WekaBases = []string{WekaBasisAuto, WekaBasisAbsolute, WekaBasisRelative}

// nestedT is subagent request r's time on its trace's clock (s), sub its
// marker: relative, r's t after the marker's; absolute, r's t, clamped to
// the marker's (a time before it by more than wekaJoinEpsilonSec is
// refused when the file is read, or makes auto choose relative).
func nestedT(sub, r wekaRequest, relative bool) float64 {
	if relative {
		return sub.T + r.T
	}
	return max(r.T, sub.T)
}

// nestedScan is what a trace's subagent requests tell of their basis.
type nestedScan struct {
	nested  int // subagent requests
	early   int // more than wekaJoinEpsilonSec before their marker
	clamped int // before it by less (read as absolute: moved to it)
	first   [2]int
}

// scanNested counts a trace's subagent requests that precede their
// marker; first is the first early one (the marker's index among the
// trace's requests, the request's among the marker's).
func scanNested(tr wekaTrace) nestedScan {
	var s nestedScan
	for i, sub := range tr.Requests {
		for k, r := range sub.Inner {
			s.nested++
			switch {
			case r.T+wekaJoinEpsilonSec < sub.T:
				if s.early++; s.early == 1 {
					s.first = [2]int{i, k}
				}
			case r.T < sub.T:
				s.clamped++
			}
		}
	}
	return s
}

// earlyWhere names subagent request k of marker i of a trace, as AIPerf's
// error does.
func earlyWhere(tr wekaTrace, path string, i, k int) string {
	return fmt.Sprintf("trace '%s' in %s, subagent '%s': inner request[%d]", tr.ID, filepath.Base(path), tr.Requests[i].AgentID, k)
}

// absoluteProblems are the problems of a trace read with the absolute
// basis: every subagent request more than wekaJoinEpsilonSec before its
// marker, placed at its "t", in AIPerf's words; more is how many were found
// beyond wekaKeptProblems.
func absoluteProblems(tr wekaTrace, path string) (ps []wekaProblem, more int) {
	for i, sub := range tr.Requests {
		for k, r := range sub.Inner {
			if r.T+wekaJoinEpsilonSec >= sub.T {
				continue
			}
			if len(ps) == wekaKeptProblems {
				more++
				continue
			}
			ps = append(ps, wekaProblem{r.tOff, problemf(fmt.Sprintf("requests[%d].requests[%d].t", i, k),
				"%s timestamp %s precedes its marker timestamp %s (--weka-nested-timestamp-basis absolute reads it on the root trace's clock: "+
					"give relative if this producer times a subagent's requests from its marker)",
				earlyWhere(tr, path, i, k), pyFloat(r.T), pyFloat(sub.T))})
		}
	}
	return ps, more
}

// pyFloat formats x as Python's repr of a float does for the times of a
// trace (10.0, 99.9999995), so that the message reads as AIPerf's.
func pyFloat(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// wekaIndex is a weka_trace dataset's index read on one basis.
type wekaIndex struct {
	convs []wekaConv
	turns int
	low   float64 // the earliest conversation's start (ms)
}

// wekaBasis chooses a weka_trace corpus's basis as its files are read:
// a given one, or auto's, which indexes the files both ways until a
// subagent request more than 1 µs before its marker decides it (relative)
// or the last file has been read (absolute), so each file is read once.
type wekaBasis struct {
	given    string       // Options.WekaBasis
	pending  bool         // auto, nothing decided yet: both indexes are kept
	relative bool         // the basis, when !pending
	ix       [2]wekaIndex // by basis: absolute, relative
	scan     nestedScan   // the corpus's
	where    string       // the first early request
}

func newWekaBasis(given string) (*wekaBasis, error) {
	b := &wekaBasis{given: given}
	for i := range b.ix {
		b.ix[i].low = math.Inf(1)
	}
	switch given {
	case "", WekaBasisAuto:
		b.pending = true
	case WekaBasisAbsolute:
	case WekaBasisRelative:
		b.relative = true
	default:
		return nil, fmt.Errorf("unknown weka nested timestamp basis %q: expected one of %s", given, strings.Join(WekaBases, ", "))
	}
	return b, nil
}

// add counts a trace's subagent requests, which may decide auto's basis.
func (b *wekaBasis) add(tr *parsedWeka, path string) {
	s := tr.scan
	if s.early > 0 && b.scan.early == 0 {
		b.where = earlyWhere(tr.wekaTrace, path, s.first[0], s.first[1])
	}
	b.scan.nested += s.nested
	b.scan.early += s.early
	b.scan.clamped += s.clamped
	if b.pending && s.early > 0 {
		b.pending, b.relative, b.ix[0] = false, true, wekaIndex{low: math.Inf(1)}
	}
}

// bases lists the bases the files are indexed on now (relative or not).
func (b *wekaBasis) bases() []bool {
	if b.pending {
		return []bool{false, true}
	}
	return []bool{b.relative}
}

// done ends auto's choice and returns the chosen basis's index.
func (b *wekaBasis) done() *wekaIndex {
	if b.pending {
		b.pending, b.relative = false, false
	}
	return &b.ix[btoi(b.relative)]
}

func btoi(x bool) int {
	if x {
		return 1
	}
	return 0
}

// note says which basis was used and why, for the user (Notes), or "":
// auto's choice when the corpus has subagent requests, and the times the
// absolute basis clamped.
func (b *wekaBasis) note() string {
	s := b.scan
	name := WekaBasisAbsolute
	if b.relative {
		name = WekaBasisRelative
	}
	var why string
	switch {
	case s.nested == 0:
		return ""
	case b.given != "" && b.given != WekaBasisAuto:
		if b.relative || s.clamped == 0 {
			return ""
		}
		why = "basis was explicitly configured"
	case b.relative:
		why = fmt.Sprintf("auto heuristic found %d nested request(s) of %d more than 1 µs before their subagent marker, the first %s; "+
			"the heuristic is not proof of the producer format: give --weka-nested-timestamp-basis if it is known", s.early, s.nested, b.where)
	default:
		why = fmt.Sprintf("auto heuristic found none of %d nested request(s) more than 1 µs before its subagent marker; "+
			"the heuristic is not proof of the producer format: give --weka-nested-timestamp-basis if it is known", s.nested)
	}
	line := fmt.Sprintf("%s: subagent request timestamps read with basis '%s' (%s)", TypeWekaTrace, name, why)
	if !b.relative && s.clamped > 0 {
		line += fmt.Sprintf("; clamped %d sub-microsecond pre-marker timestamp(s) to their marker", s.clamped)
	}
	return line
}

// Notes lists what opening d chose that its user should be told, one line
// each (a weka_trace's nested timestamp basis), or nil.
func Notes(d Dataset) []string {
	if n, ok := d.(interface{ notes() []string }); ok {
		return n.notes()
	}
	return nil
}

func (w *wekaSet) notes() []string {
	if w.note == "" {
		return nil
	}
	return []string{w.note}
}

// refuseWekaBasis is the error for an explicit basis given with an input
// of kind, another format than weka_trace (the plan refuses it when the
// format is named), or nil: "auto", the default, is accepted anywhere.
func (o Options) refuseWekaBasis(kind string) error {
	if kind == TypeWekaTrace || o.WekaBasis == "" || o.WekaBasis == WekaBasisAuto {
		return nil
	}
	return fmt.Errorf("--weka-nested-timestamp-basis %s applies to weka_trace, whose subagents' requests carry their own timestamps; %s has none: remove it", o.WekaBasis, kind)
}

// index adds the conversations of file file's trace, read on basis
// relative (or not), to ix.
func (w *wekaSet) index(ix *wekaIndex, tr *parsedWeka, file int32, relative bool) {
	if tr.relative != relative {
		tr.relative, tr.warp = relative, w.idleWarp(tr.wekaTrace, relative)
	}
	for _, c := range w.plan(tr.wekaTrace) {
		turns, first := w.convTurns(tr, c.sub, nil, false)
		if len(turns) == 0 {
			continue
		}
		c.file, c.ts = file, first
		ix.low = min(ix.low, c.ts)
		ix.convs = append(ix.convs, c)
		ix.turns += len(turns)
	}
}
