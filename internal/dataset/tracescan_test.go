package dataset

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeLines(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return path
}

func TestScanTraceRows(t *testing.T) {
	path := writeLines(t,
		`{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}`,
		``,
		`{"session_id": "s", "delay": 7, "text_input": "hello"}`)
	var rows []TraceRow
	require.NoError(t, ScanTrace(context.Background(), path, 512, func(r TraceRow) error {
		r.Raw = nil
		rows = append(rows, r)
		return nil
	}))
	require.Len(t, rows, 2)
	assert.Equal(t, 1, rows[0].Line)
	assert.Equal(t, 600, rows[0].InputLength)
	assert.Equal(t, 5, rows[0].OutputLength)
	assert.Equal(t, []int64{1, 2}, rows[0].HashIDs)
	assert.Zero(t, rows[0].Timestamp)
	assert.True(t, math.IsNaN(rows[0].Delay))
	assert.Equal(t, 3, rows[1].Line, "blank lines count")
	assert.Zero(t, rows[1].InputLength, "text_input: no input_length")
	assert.Equal(t, "s", *rows[1].SessionID)
	assert.Equal(t, 7.0, rows[1].Delay)
}

// Every problem is listed, with its line, field and what was expected.
func TestScanTraceProblems(t *testing.T) {
	path := writeLines(t,
		`{"timestamp": 0, "input_length": 600, "hash_ids": [1, 2, 3]}`,
		`{"timestamp": "soon", "input_length": 10}`,
		`not json`,
		`{"session_id": "a", "timestamp": 5, "input_length": 10}`,
		`{"session_id": "a", "timestamp": 4, "input_length": 10}`,
		`{"input_length": 10}`)
	calls := 0
	err := ScanTrace(context.Background(), path, 512, func(r TraceRow) error {
		calls++
		if r.Line == 6 {
			return &LineError{Field: "timestamp", Msg: "the simulator needs one"}
		}
		return nil
	})
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "5 problems")
	for _, want := range []string{
		path + ":1: hash_ids: input length: 600, hash ids: [1 2 3], block size: 512 are not compatible",
		path + ":2:15: timestamp: expected a number",
		path + ":3:1: expected a JSON object, got something that is not JSON",
		path + `:5: timestamp: timestamp 4 goes backwards: session "a" (first row at line 4) was at 5 on line 4`,
		path + ":6: timestamp: the simulator needs one",
	} {
		assert.Contains(t, msg, want)
	}
	assert.Equal(t, 2, calls, "fn sees the valid rows only")
	var le *LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 1, le.Line)
}

func TestScanTraceStopsOnFnError(t *testing.T) {
	path := writeLines(t, `{"input_length": 1}`, `{"input_length": 2}`)
	boom := errors.New("boom")
	calls := 0
	err := ScanTrace(context.Background(), path, 512, func(TraceRow) error { calls++; return boom })
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 1, calls)
}

func TestScanTraceEmptyOrMissing(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, []byte("\n\n"), 0o644))
	err := ScanTrace(context.Background(), empty, 512, func(TraceRow) error { return nil })
	assert.ErrorContains(t, err, "no records")
	err = ScanTrace(context.Background(), filepath.Join(t.TempDir(), "nope"), 512, func(TraceRow) error { return nil })
	assert.ErrorContains(t, err, "is not a valid file")
}

func TestScanTraceCapsProblems(t *testing.T) {
	lines := make([]string, 80)
	for i := range lines {
		lines[i] = `{"input_length": 0}`
	}
	err := ScanTrace(context.Background(), writeLines(t, lines...), 512, func(TraceRow) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "80 problems")
	assert.Contains(t, err.Error(), "and 30 more problems")
}

// TestScanTraceBoundsOutputLength: a reply length past what a prompt may
// have is refused on both the fast path and the full check, so the cache
// simulator never sizes a block list by a hostile number.
func TestScanTraceBoundsOutputLength(t *testing.T) {
	for _, n := range []string{"16777217", "9223372036854775807"} {
		path := writeLines(t, `{"timestamp": 0, "input_length": 600, "output_length": `+n+`, "hash_ids": [1, 2]}`)
		err := ScanTrace(context.Background(), path, 512, func(TraceRow) error { return nil })
		require.Error(t, err, n)
		assert.Contains(t, err.Error(), "output_length: expected an integer from 1 to 16777216", n)
	}
}

// AsProfile checks a trace as profile checks it given no other flag, with
// the same problems: a timestamped trace (its first record has one) needs
// a timestamp on every conversation's first row (profile's fixed
// schedule), and a Bailian record is refused rather than misread as a
// mooncake one. Without AsProfile (profile's own --synthesis-* pass, which
// knows --no-fixed-schedule) neither is checked.
func TestScanTraceAsProfile(t *testing.T) {
	mixed := writeLines(t,
		`{"input_length": 8, "hash_ids": [1,2], "timestamp": 0}`,
		`{"input_length": 8, "hash_ids": [1,3], "delay": 50}`,
		`{"session_id": "s", "input_length": 8, "timestamp": 200}`,
		`{"session_id": "s", "input_length": 8}`,
		`{"session_id": "u", "input_length": 8, "delay": 5}`,
		`{"session_id": "u", "input_length": 8, "timestamp": 300}`,
		`{"session_id": "u", "input_length": 8}`)
	scan := func(path string, asProfile bool) error {
		return ScanTraceWith(context.Background(), path, ScanOptions{BlockSize: 4, AsProfile: asProfile}, func(TraceRow) error { return nil })
	}
	require.NoError(t, scan(mixed, false))
	err := scan(mixed, true)
	require.Error(t, err)
	_, perr := Open(context.Background(), o200k(t), Options{InputFile: mixed, FixedSchedule: true, BlockSize: 4})
	require.Error(t, perr)
	assert.Equal(t, perr.Error(), "mooncake_trace dataset: "+err.Error(), "the problems profile reports, at the same lines")
	assert.Contains(t, err.Error(), mixed+":2: timestamp: the first turn of this conversation has no timestamp")
	assert.Contains(t, err.Error(), mixed+":5: timestamp: the first turn of this conversation has no timestamp")

	untimed := writeLines(t, `{"input_length": 8}`, `{"input_length": 8, "timestamp": 5}`)
	assert.NoError(t, scan(untimed, true), "not timestamped: profile sends it at --concurrency")

	bailian := writeLines(t,
		`{"chat_id": 1, "parent_chat_id": -1, "timestamp": 1.5, "input_length": 8, "output_length": 10, "turn": 1, "hash_ids": [1, 2]}`,
		`{"chat_id": 2, "parent_chat_id": 1, "timestamp": 3, "input_length": 48, "output_length": 10, "type": "text", "turn": 2}`)
	err = scan(bailian, false)
	require.Error(t, err, "its type is not a mooncake one")
	assert.NotContains(t, err.Error(), ":1:", "read as mooncake when the caller says it is one")
	err = scan(bailian, true)
	require.Error(t, err)
	for _, line := range []string{":1: chat_id: a bailian_trace record", ":2: chat_id: a bailian_trace record"} {
		assert.Contains(t, err.Error(), bailian+line)
	}
	assert.Contains(t, err.Error(), "--custom-dataset-type bailian_trace")
}

// A trace with a problem in its rows lists the conversations a fixed
// schedule cannot start too, at their lines and in line order, as the
// scan does (profile listed only the row's problem).
func TestOpenListsEveryProblemAsTheScan(t *testing.T) {
	path := writeLines(t,
		`{"session_id":"a","timestamp":5,"input_length":8}`,
		`{"session_id":"a","timestamp":4,"input_length":8}`,
		`{"session_id":"b","input_length":8}`,
		`{"input_length":8}`)
	err := ScanTraceWith(context.Background(), path, ScanOptions{BlockSize: 4, AsProfile: true}, func(TraceRow) error { return nil })
	require.Error(t, err)
	_, perr := Open(context.Background(), o200k(t), Options{InputFile: path, FixedSchedule: true, BlockSize: 4})
	require.Error(t, perr)
	assert.Equal(t, "mooncake_trace dataset: 3 problems:\n"+
		path+`:2: timestamp: timestamp 4 goes backwards: session "a" (first row at line 1) was at 5 on line 1`+"\n"+
		path+":3: timestamp: the first turn of this conversation has no timestamp: a fixed schedule needs one on every conversation's first turn\n"+
		path+":4: timestamp: the first turn of this conversation has no timestamp: a fixed schedule needs one on every conversation's first turn",
		perr.Error())
	assert.Equal(t, perr.Error(), "mooncake_trace dataset: "+err.Error(), "the problems profile reports, with the same messages")
}
