package dataset

import (
	"bytes"
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

// ScanOptions say how ScanTraceWith reads a trace.
type ScanOptions struct {
	// BlockSize is the tokens per hash id the rows' hash_ids must fit.
	BlockSize int
	// AsProfile checks the file as aiperf profile --input-file FILE checks
	// it when no other flag says what it is: a record with a bailian_trace's
	// keys is refused (profile detects such a file as one, with timestamps in
	// seconds and sessions by chat_id, which a mooncake_trace reader would
	// misread), and when the first record has a timestamp (profile then
	// replays the file on a fixed schedule) every conversation's first row
	// must have one.
	AsProfile bool
}

// ScanTrace is ScanTraceWith with the rows' hash ids checked for
// blockSize tokens per id.
func ScanTrace(ctx context.Context, path string, blockSize int, fn func(TraceRow) error) error {
	return ScanTraceWith(ctx, path, ScanOptions{BlockSize: blockSize}, fn)
}

// ScanTraceWith reads the mooncake_trace file at path in order and calls
// fn with each valid record, in bounded memory whatever the file's size.
// Every record is checked as Open checks it (hash_ids against input_length
// for o.BlockSize tokens per hash id; a session's timestamps must not go
// backwards; and o.AsProfile's checks), and every problem is reported as
// Open reports them, file and line, field and expectation, up to 50,
// joined. An error fn returns that is a *LineError is listed with them
// (its Path and Line filled in) and the scan goes on; any other error
// stops it.
func ScanTraceWith(ctx context.Context, path string, o ScanOptions, fn func(TraceRow) error) error {
	f, err := inputfile.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("input file: %q is not a valid file", path)
		}
		return fmt.Errorf("input file: %w", err)
	}
	defer f.Close()
	s := traceScan{ps: problems{path: path}, seed: maphash.MakeSeed(), last: map[uint64]sessionLast{}}
	if o.AsProfile {
		det, err := Detect(path, TypeMooncakeTrace) // profile's rule for a fixed schedule
		s.timed = err == nil && det.Timestamped
	}
	var stop error
	err = checkLines(ctx, f, traceCheck(o), func(line []byte, no int, _ int64, info rowInfo, ps []problem) {
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
		if !s.checkRow(row) {
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

// traceCheck is the line check of a trace scan: the common shape read
// without encoding/json, any other line checked in full.
func traceCheck(o ScanOptions) func([]byte) (rowInfo, []problem) {
	full := withTypeHint(TypeMooncakeTrace, func(line []byte) (rowInfo, []problem) {
		info, r, ps := decodeMooncake(line, o.BlockSize)
		if ps == nil {
			info.trace = rowOf(r)
		}
		return info, ps
	})
	return func(line []byte) (rowInfo, []problem) {
		if row, ok := fastTraceRow(line, o.BlockSize); ok {
			return rowInfo{trace: row}, nil
		}
		if o.AsProfile && isBailian(line) {
			return rowInfo{}, []problem{problemf("chat_id", "a bailian_trace record (chat_id, parent_chat_id, timestamps in seconds), "+
				"which a mooncake_trace reader would misread: analyze-trace and synthesize-trace read mooncake_trace records only "+
				"(aiperf profile --custom-dataset-type bailian_trace replays this file)")}
		}
		return full(line)
	}
}

// isBailian reports whether line is a bailian_trace record.
func isBailian(line []byte) bool {
	if !bytes.Contains(line, []byte(`"chat_id"`)) {
		return false
	}
	_, ps := checkBailian(line, 0)
	return ps == nil
}

// traceScan is what ScanTrace remembers across rows.
type traceScan struct {
	ps    problems
	rows  int
	seed  maphash.Seed
	last  map[uint64]sessionLast // per session (by hashed id)
	timed bool                   // every conversation's first row needs a timestamp
}

// sessionLast is a session's latest timestamp (NaN: none yet) and its
// line.
type sessionLast struct {
	ts          float64
	line, first int
}

// checkRow checks a row against the rows before it: a conversation's
// first row has a timestamp when the scan is timed (as Open's fixed
// schedule needs), and a session's timestamps do not go backwards.
func (s *traceScan) checkRow(row TraceRow) bool {
	untimed := math.IsNaN(row.Timestamp)
	if row.SessionID == nil {
		return s.starts(row.Line, untimed)
	}
	key := maphash.String(s.seed, *row.SessionID)
	last, seen := s.last[key]
	switch {
	case !seen && !s.starts(row.Line, untimed):
		s.last[key] = sessionLast{math.NaN(), row.Line, row.Line} // its first row is the one reported
		return false
	case untimed:
		if !seen {
			s.last[key] = sessionLast{math.NaN(), row.Line, row.Line}
		}
		return true
	case seen && row.Timestamp < last.ts:
		s.ps.add(row.Line, backwards(row.Timestamp, sessionAt(*row.SessionID, last.first), last.ts, last.line))
		return false
	}
	if !seen {
		last.first = row.Line
	}
	s.last[key] = sessionLast{row.Timestamp, row.Line, last.first}
	return true
}

// starts checks the first row of a conversation, at line: on a timed
// scan it needs a timestamp.
func (s *traceScan) starts(line int, untimed bool) bool {
	if s.timed && untimed {
		s.ps.add(line, noStartTime())
		return false
	}
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

// noStartTime is the problem of a conversation a fixed schedule cannot
// start: its first turn has no timestamp.
func noStartTime() problem {
	return problemf("timestamp", "the first turn of this conversation has no timestamp: a fixed schedule needs one on every conversation's first turn")
}

// sessionAt names session id, whose first row is at line first, in a
// problem.
func sessionAt(id string, first int) string {
	return fmt.Sprintf("session %s (first row at line %d)", brief(id), first)
}
