package dataset

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"os"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// MaxInputLength is the largest input_length a trace record may give.
const MaxInputLength = maxInputLength

// TraceRow is one mooncake_trace record as the trace tools (analysis,
// simulation, synthesis) read it.
type TraceRow struct {
	// Line is the record's 1-based line in the file.
	Line int
	// Raw is the record's text; it is valid only during the call it is
	// passed to.
	Raw []byte
	// Timestamp and Delay are in ms; NaN when absent.
	Timestamp, Delay float64
	// InputLength is 0 for a row that gives text_input, messages or
	// payload instead.
	InputLength int
	// OutputLength is 0 when absent.
	OutputLength int
	HashIDs      []int64
	// SessionID is nil for a row without one.
	SessionID *string
}

// ScanTrace reads the mooncake_trace file at path in order and calls fn
// with each valid record, in bounded memory whatever the file's size. Every
// record is checked as Open checks it (hash_ids against input_length for
// blockSize tokens per hash id; a session's timestamps must not go
// backwards), and every problem is reported as Open reports them, file and
// line, field and expectation, up to 50, joined. An error fn returns that
// is a *LineError is listed with them (its Path and Line filled in) and
// the scan goes on; any other error stops it.
func ScanTrace(ctx context.Context, path string, blockSize int, fn func(TraceRow) error) error {
	f, err := inputfile.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("input file: %q is not a valid file", path)
		}
		return fmt.Errorf("input file: %w", err)
	}
	defer f.Close()
	check := withTypeHint(TypeMooncakeTrace, func(line []byte) (rowInfo, []problem) {
		if row, ok := fastTraceRow(line, blockSize); ok {
			return rowInfo{trace: row}, nil
		}
		info, r, ps := decodeMooncake(line, blockSize)
		if ps == nil {
			info.trace = rowOf(r)
		}
		return info, ps
	})
	s := traceScan{ps: problems{path: path}, seed: maphash.MakeSeed(), last: map[uint64]sessionLast{}}
	var stop error
	err = checkLines(ctx, f, check, func(line []byte, no int, _ int64, info rowInfo, ps []problem) {
		if stop != nil {
			return
		}
		s.rows++
		if ps != nil {
			s.ps.addAll(no, ps)
			return
		}
		row := info.trace
		row.Line, row.Raw = no, line
		if !s.inOrder(row) {
			return
		}
		if err := fn(row); err != nil {
			var le *LineError
			if !errors.As(err, &le) {
				stop = err
				return
			}
			s.ps.add(no, problem{Field: le.Field, Msg: le.Msg})
		}
	})
	switch {
	case stop != nil:
		return stop
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case !s.ps.empty():
		return s.ps.err()
	case s.rows == 0:
		return &LineError{Path: path, Msg: "no records: the file is empty or holds only blank lines"}
	}
	return nil
}

// traceScan is what ScanTrace remembers across rows.
type traceScan struct {
	ps   problems
	rows int
	seed maphash.Seed
	last map[uint64]sessionLast // per session (by hashed id)
}

// sessionLast is a session's latest timestamp and its line.
type sessionLast struct {
	ts   float64
	line int
}

// inOrder checks that a session row's timestamp does not go backwards.
func (s *traceScan) inOrder(row TraceRow) bool {
	if row.SessionID == nil || math.IsNaN(row.Timestamp) {
		return true
	}
	key := maphash.String(s.seed, *row.SessionID)
	last, ok := s.last[key]
	if ok && row.Timestamp < last.ts {
		s.ps.add(row.Line, backwards(row.Timestamp, "session "+brief(*row.SessionID), last.ts, last.line))
		return false
	}
	s.last[key] = sessionLast{row.Timestamp, row.Line}
	return true
}

// rowOf is the TraceRow of a checked record (without its line).
func rowOf(r mooncakeRecord) TraceRow {
	row := TraceRow{Timestamp: timeOrNaN(r.Timestamp), Delay: timeOrNaN(r.Delay), SessionID: r.SessionID}
	if r.InputLength != nil {
		row.InputLength = int(*r.InputLength)
	}
	if r.OutputLength != nil {
		row.OutputLength = int(*r.OutputLength)
	}
	if r.HashIDs != nil {
		row.HashIDs = *r.HashIDs
	}
	return row
}
