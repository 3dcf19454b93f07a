package dataset

import (
	"bytes"
	"math"
	"strconv"
)

// fastTraceRow reads the common shape of a mooncake trace record without
// encoding/json: one flat object whose keys are among timestamp,
// input_length, output_length, hash_ids, session_id and delay, with plain
// numbers, an integer list and a string without escapes. It reports false
// for anything else, and for a record checkMooncake would refuse; the
// caller then runs the full check, so the two agree on every record.
func fastTraceRow(line []byte, blockSize int) (TraceRow, bool) {
	row := TraceRow{Timestamp: math.NaN(), Delay: math.NaN()}
	p := fastParser{b: line}
	if !p.skip('{') {
		return row, false
	}
	var seen uint8
	for first := true; ; first = false {
		if p.skip('}') {
			break
		}
		if !first && !p.skip(',') {
			return row, false
		}
		key, ok := p.plainString()
		if !ok || !p.skip(':') {
			return row, false
		}
		var bit uint8
		switch string(key) {
		case "timestamp":
			bit = 1
			row.Timestamp, ok = p.time(MaxTimestampMs)
		case "delay":
			bit = 2
			row.Delay, ok = p.time(MaxDelayMs)
		case "input_length":
			var n int64
			n, ok = p.integer()
			bit, row.InputLength, ok = 4, int(n), ok && n >= 1 && n <= maxInputLength
		case "output_length":
			var n int64
			n, ok = p.integer()
			bit, row.OutputLength, ok = 8, int(n), ok && n >= 1 && n <= maxInputLength
		case "hash_ids":
			bit = 16
			row.HashIDs, ok = p.integers()
		case "session_id":
			var s []byte
			s, ok = p.plainString()
			id := string(s)
			bit, row.SessionID = 32, &id
		default:
			return row, false
		}
		if !ok || seen&bit != 0 {
			return row, false
		}
		seen |= bit
	}
	if p.ws(); p.i != len(p.b) || seen&4 == 0 { // trailing bytes, or no input_length
		return row, false
	}
	if row.HashIDs != nil && checkHashIDs(int64(row.InputLength), row.HashIDs, blockSize) != "" {
		return row, false
	}
	return row, true
}

// fastParser scans a JSON text.
type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

// skip consumes c after blanks, reporting whether it was there.
func (p *fastParser) skip(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// plainString reads a string of printable ASCII without escapes.
func (p *fastParser) plainString() ([]byte, bool) {
	if !p.skip('"') {
		return nil, false
	}
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, false
		}
	}
	return nil, false
}

// number reads a JSON number's text; integral reports it has no fraction
// or exponent.
func (p *fastParser) number() (text []byte, integral, ok bool) {
	p.ws()
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := p.digits()
	if digits == 0 || digits > 1 && p.b[p.i-digits] == '0' {
		return nil, false, false
	}
	integral = true
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return nil, false, false
		}
		integral = false
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return nil, false, false
		}
		integral = false
	}
	return p.b[start:p.i], integral, true
}

func (p *fastParser) digits() int {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

// integer reads an integral number that fits an int64 (its digits
// summed in place: no allocation).
func (p *fastParser) integer() (int64, bool) {
	text, integral, ok := p.number()
	if !ok || !integral {
		return 0, false
	}
	neg := text[0] == '-'
	if neg {
		text = text[1:]
	}
	var n uint64
	for _, c := range text {
		if n > (math.MaxUint64-9)/10 {
			return 0, false
		}
		n = 10*n + uint64(c-'0')
	}
	switch {
	case !neg && n <= math.MaxInt64:
		return int64(n), true
	case neg && n <= 1<<63:
		return int64(-n), true // -(1<<63) wraps to itself: math.MinInt64
	}
	return 0, false
}

// time reads a number of milliseconds from 0 to hi (checkTime's and
// checkDelay's rule).
func (p *fastParser) time(hi float64) (float64, bool) {
	text, _, ok := p.number()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(text), 64)
	return v, err == nil && v >= 0 && v <= hi
}

// integers reads a list of integers.
func (p *fastParser) integers() ([]int64, bool) {
	if !p.skip('[') {
		return nil, false
	}
	out := make([]int64, 0, bytes.Count(p.b[p.i:], []byte{','})+1)
	if p.skip(']') {
		return out, true
	}
	for {
		n, ok := p.integer()
		if !ok {
			return nil, false
		}
		out = append(out, n)
		if p.skip(']') {
			return out, true
		}
		if !p.skip(',') {
			return nil, false
		}
	}
}
