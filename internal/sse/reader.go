package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// bufferSize is the read buffer of a Reader; longer lines are accumulated.
const bufferSize = 16 << 10

// maxKeep bounds the line and data buffers a Reader keeps across Reset, so
// that one huge event does not pin memory in a pooled Reader.
const maxKeep = 64 << 10

// DefaultMaxEvent is the largest line or event a Reader accepts when no
// other limit is set: far above any real inference chunk, far below what a
// hostile stream could make the reader buffer.
const DefaultMaxEvent = 16 << 20

// ErrTooLarge is returned (wrapped) by Next when one line or one event's
// data exceeds the Reader's limit; the stream cannot be read further.
var ErrTooLarge = errors.New("sse event too large")

// Event is one dispatched server-sent event.
type Event struct {
	// Name is the value of the event's "event:" line, empty if it had none.
	Name string
	// Data is the event's "data:" values joined with "\n". It is owned by
	// the Reader and valid only until the next call to Next or Reset.
	Data []byte
	// At is the clock reading taken right after the read that completed the
	// event's first line returned, before any further parsing.
	At int64
	// Skipped is the bytes read since the previous event that are not the
	// event's name or data: the field names, terminators and trimmed
	// spaces of its lines, comments, "id:", "retry:" and unknown fields,
	// blank lines that dispatched nothing. Read and dropped, for a caller
	// that bounds what a stream costs it.
	Skipped int
}

// Reader splits a byte stream into events. It is not safe for concurrent use.
// A Reader can be reused with Reset, for example from a sync.Pool.
type Reader struct {
	src  stampReader
	br   *bufio.Reader
	long []byte // a line longer than the read buffer, accumulated
	rest []byte // lines left in the current segment after a lone CR
	more bool   // rest holds at least one (possibly empty) line
	read bool   // a line was read: a byte order mark is no longer stripped

	data    []byte // the event being built; returned as Event.Data
	name    string
	last    string // last event name seen, reused to avoid allocating
	at      int64
	started bool // a field line of the current event was read
	hasData bool // a data line of the current event was read
	wire    int  // bytes read since the last event was dispatched
	err     error
	max     int // largest line or event data accepted, in bytes
}

// stampReader reads from r and remembers the clock reading taken right after
// the last read that returned bytes.
type stampReader struct {
	r   io.Reader
	now func() int64
	at  int64
}

func (s *stampReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.at = s.now()
	}
	return n, err
}

// NewReader returns a Reader over r. now is the clock used to stamp events;
// it is called once after every read from r that returns bytes.
func NewReader(r io.Reader, now func() int64) *Reader {
	rd := &Reader{}
	rd.br = bufio.NewReaderSize(&rd.src, bufferSize)
	rd.Reset(r, now)
	return rd
}

// SetMax sets the largest line, and the largest data of one event, that Next
// accepts (n <= 0: DefaultMaxEvent). Beyond it Next fails with ErrTooLarge,
// having buffered at most about n bytes. The limit survives Reset.
func (r *Reader) SetMax(n int) {
	if n <= 0 {
		n = DefaultMaxEvent
	}
	r.max = n
}

// Reset discards all state and makes the Reader read from r with clock now.
func (r *Reader) Reset(src io.Reader, now func() int64) {
	if r.max == 0 {
		r.max = DefaultMaxEvent
	}
	r.src = stampReader{r: src, now: now}
	r.br.Reset(&r.src)
	if cap(r.long) > maxKeep {
		r.long = nil
	}
	if cap(r.data) > maxKeep {
		r.data = nil
	}
	r.rest, r.more, r.read, r.err = nil, false, false, nil
	r.wire = 0
	r.clear()
}

func (r *Reader) clear() {
	r.data = r.data[:0]
	r.name, r.at, r.started, r.hasData = "", 0, false, false
}

// Next returns the next event. An event is dispatched at a blank line when it
// has a data or event line; a pending event at the end of the stream is
// dispatched too. Next returns io.EOF after the last event, or the read error
// that stopped the stream. Comment, "id:" and "retry:" lines are ignored, and
// trailing spaces and tabs are trimmed from every line. What is read besides
// an event's name and data (Event.Skipped) counts toward the same limit as
// its data: more than that between two events (an endless run of comments)
// fails with ErrTooLarge too.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	r.clear()
	r.wire = 0
	for {
		line, err := r.line()
		if err != nil {
			if err == io.EOF {
				r.err = io.EOF
				if r.hasData || r.name != "" {
					return r.event(), nil
				}
			} else {
				r.err = fmt.Errorf("read sse stream: %w", err)
			}
			return Event{}, r.err
		}
		switch {
		case len(line) == 0 && (r.hasData || r.name != ""):
			return r.event(), nil
		case len(line) == 0:
			r.clear()
		case line[0] == ':': // a comment, counted in skipped()
		default:
			r.field(line)
		}
		switch {
		case len(r.data) > r.max:
			r.err = fmt.Errorf("%w: event data exceeds %d bytes", ErrTooLarge, r.max)
			return Event{}, r.err
		case r.skipped() > r.max:
			r.err = fmt.Errorf("%w: more than %d bytes of comments and ignored lines without an event", ErrTooLarge, r.max)
			return Event{}, r.err
		}
	}
}

// skipped is the bytes read since the last event that are not the name or
// data of the event being built.
func (r *Reader) skipped() int { return r.wire - len(r.name) - len(r.data) }

func (r *Reader) event() Event {
	return Event{Name: r.name, Data: r.data, At: r.at, Skipped: r.skipped()}
}

// field applies one "name: value" line to the event being built.
func (r *Reader) field(line []byte) {
	if !r.started {
		r.at, r.started = r.src.at, true
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		if string(value) != r.last {
			r.last = string(value)
		}
		r.name = r.last
	}
}

// bom is U+FEFF in UTF-8: a byte order mark.
var bom = []byte("\ufeff")

// line returns the next line without its terminator (LF, CRLF or CR) and
// without trailing spaces or tabs, and the stream's first without a
// leading byte order mark.
func (r *Reader) line() ([]byte, error) {
	var s []byte
	if r.more {
		s, r.more = r.rest, false
	} else {
		seg, err := r.segment()
		if err != nil {
			return nil, err
		}
		s = seg
		if !r.read {
			// The spec: one leading U+FEFF BYTE ORDER MARK is ignored. Left
			// in place, it makes the first line an unknown field ("\ufeffdata")
			// and the first event is silently lost.
			s, r.read = bytes.TrimPrefix(s, bom), true
		}
		if n := len(s); n > 0 && s[n-1] == '\n' {
			s = s[:n-1]
		}
		if n := len(s); n > 0 && s[n-1] == '\r' {
			s = s[:n-1]
		}
	}
	if i := bytes.IndexByte(s, '\r'); i >= 0 {
		s, r.rest, r.more = s[:i], s[i+1:], true
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s, nil
}

// segment reads up to and including the next LF, or the unterminated tail of
// the stream. The result is valid until the next read.
func (r *Reader) segment() ([]byte, error) {
	seg, err := r.br.ReadSlice('\n')
	r.wire += len(seg)
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], seg...)
		for err == bufio.ErrBufferFull {
			if len(r.long) > r.max {
				return nil, fmt.Errorf("%w: a line exceeds %d bytes", ErrTooLarge, r.max)
			}
			seg, err = r.br.ReadSlice('\n')
			r.wire += len(seg)
			r.long = append(r.long, seg...)
		}
		seg = r.long
	}
	switch {
	case err == nil:
		return seg, nil
	case err == io.EOF && len(seg) > 0:
		return seg, nil // last line without terminator; io.EOF comes next call
	default:
		return nil, err // a partial line before a read error is dropped
	}
}
