package dataset

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The columns of a BurstGPT CSV file AIPerf reads; the others (Model, Total
// tokens, Log Type) are ignored.
var burstColumns = [3]string{"Timestamp", "Request tokens", "Response tokens"}

// burstCSV is the layout of a BurstGPT file: its header line and where its
// columns are.
type burstCSV struct {
	header []byte
	col    [3]int // indices of burstColumns
}

// readBurstHeader reads the header of the BurstGPT file at path.
func readBurstHeader(path string) (*burstCSV, error) {
	line, no, err := firstLine(context.Background(), path)
	if err != nil {
		return nil, err
	}
	b, missing := parseBurstHeader(line)
	if missing != nil {
		return nil, &LineError{Path: path, Line: no, Msg: fmt.Sprintf("a BurstGPT CSV file's header names the columns %q; "+
			"missing %q", burstColumns, missing)}
	}
	return b, nil
}

// parseBurstHeader finds the columns in a header line, or lists those
// missing.
func parseBurstHeader(line []byte) (*burstCSV, []string) {
	names, _ := csvFields(line)
	b := &burstCSV{header: bytes.Clone(line)}
	var missing []string
	for k, want := range burstColumns {
		if b.col[k] = slices.Index(names, want); b.col[k] < 0 {
			missing = append(missing, want)
		}
	}
	return b, missing
}

// isBurstGPT reports whether the file at path starts with a BurstGPT
// header (AIPerf's can_load).
func isBurstGPT(path string) bool {
	line, _, err := firstLine(context.Background(), path)
	if err != nil {
		return false
	}
	_, missing := parseBurstHeader(line)
	return missing == nil
}

// csvFields splits one CSV line into its fields.
func csvFields(line []byte) ([]string, error) {
	r := csv.NewReader(bytes.NewReader(line))
	r.FieldsPerRecord = -1
	return r.Read()
}

// burstRow is a BurstGPT row's values: AIPerf's BurstGPTTrace.
type burstRow struct {
	seconds       float64
	input, output int64
}

// parse reads and checks a data line as AIPerf's loader does (a timestamp
// in seconds, the token counts integers), and checks the bounds a trace's
// are held to. A response of 0 tokens (a failed request in BurstGPT) sends
// no max tokens, as AIPerf sends none for 0.
func (b *burstCSV) parse(line []byte) (burstRow, []problem) {
	var r burstRow
	fields, err := csvFields(line)
	if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
		return r, []problem{{Col: pe.Column, Msg: "invalid CSV: " + pe.Err.Error()}}
	} else if err != nil {
		return r, []problem{problemf("", "invalid CSV: %v", err)}
	}
	if n := slices.Max(b.col[:]) + 1; len(fields) < n {
		return r, []problem{problemf("", "expected at least %d comma-separated fields, as the header has, got %d", n, len(fields))}
	}
	var ps []problem
	ts, err := strconv.ParseFloat(strings.TrimSpace(fields[b.col[0]]), 64)
	if err != nil {
		ps = append(ps, problemf(burstColumns[0], "expected a number of seconds, got %s", brief(fields[b.col[0]])))
	} else {
		ps = append(ps, checkSeconds(burstColumns[0], &ts)...)
	}
	for k, v := range []*int64{&r.input, &r.output} {
		name, text := burstColumns[k+1], strings.TrimSpace(fields[b.col[k+1]])
		n, err := strconv.ParseInt(text, 10, 64)
		lo := int64(1 - k) // a request needs a token; a response may have none
		switch {
		case err != nil:
			ps = append(ps, problemf(name, "expected an integer, got %s", brief(text)))
		case n < lo || n > maxInputLength:
			ps = append(ps, problemf(name, "expected an integer from %d to %d, got %d", lo, maxInputLength, n))
		}
		*v = n
	}
	r.seconds = ts
	return r, ps
}

// check is the line check of a BurstGPT file: the header is skipped, each
// other line is one request on its own.
func (b *burstCSV) check(line []byte) (rowInfo, []problem) {
	if bytes.Equal(line, b.header) {
		return rowInfo{skip: true}, nil
	}
	r, ps := b.parse(line)
	if ps != nil {
		return rowInfo{}, ps
	}
	ms := r.seconds * 1000
	return rowInfo{turns: 1, ts: ms, ts0: ms, first: ms, last: ms, mode: modeSynth}, nil
}

// burstTurn builds the turn of a BurstGPT row: a prompt of its request
// tokens, its response tokens as max tokens.
func (d *fileDataset) burstTurn(c *convBuilder, line []byte, row uint64) error {
	r, ps := d.burst.parse(line)
	if ps != nil {
		return fmt.Errorf("%s: %s", ps[0].Field, ps[0].Msg)
	}
	t := Turn{MaxTokens: int(r.output)}
	ms := r.seconds * 1000
	d.setTiming(&t, &ms, nil)
	d.hashTurn(&t, nil, int(r.input), row)
	c.Turns = append(c.Turns, t)
	return nil
}
