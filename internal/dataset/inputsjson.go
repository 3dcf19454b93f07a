package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// inputsSession is one entry of an inputs.json file's "data" list: AIPerf's
// InputsJsonSession.
type inputsSession struct {
	SessionID *string           `json:"session_id"`
	Payloads  []json.RawMessage `json:"payloads"`
}

// openInputsJSON indexes an inputs.json file (AIPerf's InputsFile, and
// what --export writes): {"data": [{"session_id", "payloads": [bodies]}]},
// one conversation per entry, each payload a turn sent as it is. The
// document is read as a stream, one entry at a time, so its size does not
// matter; each entry is read back when it is replayed.
func openInputsJSON(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	d := &fileDataset{kind: TypeInputsJSON, path: o.InputFile, o: o, tok: tok}
	f, err := inputfile.Open(o.InputFile)
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", TypeInputsJSON, err)
	}
	d.f, d.list, d.stamp = f, []*os.File{f}, stampOf(f)
	ix := &indexer{d: d, ps: problems{path: d.path}}
	ids := map[uint64]int{} // session ids (hashed) → their line
	seed := maphash.MakeSeed()
	err = scanInputs(ctx, f, func(s inputsEntry) bool {
		ps := s.check()
		if ps == nil {
			key := maphash.String(seed, *s.rec.SessionID)
			if at, dup := ids[key]; dup {
				ps = []problem{problemf(s.field+".session_id", "session %s is also on line %d: each entry is one session", brief(*s.rec.SessionID), at)}
			}
			ids[key] = s.line
		}
		nan := math.NaN()
		ix.add(s.raw, s.line, s.off, rowInfo{turns: len(s.rec.Payloads), ts: nan, ts0: nan, first: nan, last: nan}, ps)
		return true
	})
	var le *LineError
	if errors.As(err, &le) && le.Path == "" {
		le.Path = d.path
	}
	if err == nil {
		err = ix.ps.err()
	}
	if err == nil && ix.lines == 0 {
		err = &LineError{Path: d.path, Msg: `no sessions: the "data" list is empty`}
	}
	if err == nil {
		ix.group()
		err = ix.schedule()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s dataset: %w", TypeInputsJSON, err)
	}
	return d, nil
}

// inputsEntry is one entry of the "data" list as scanInputs finds it.
type inputsEntry struct {
	raw   []byte // its text (valid during the call only)
	off   int64  // its byte offset
	line  int    // the line it starts on
	col   int    // the column it starts at
	field string // "data[i]"
	rec   inputsSession
	ps    []problem // decoding problems, placed
}

// check is every problem of the entry, placed in the file.
func (e *inputsEntry) check() []problem {
	if e.ps != nil {
		return e.ps
	}
	var ps []problem
	switch {
	case e.rec.SessionID == nil:
		ps = append(ps, problemf(e.field+".session_id", "required: a string naming the session"))
	case e.rec.Payloads == nil:
		ps = append(ps, problemf(e.field+".payloads", "required: the list of the session's request bodies, one per turn"))
	case len(e.rec.Payloads) == 0:
		ps = append(ps, problemf(e.field+".payloads", "expected at least one request body, got an empty list"))
	}
	for k, p := range e.rec.Payloads {
		if kind := jsonKindOf(p); kind != "an object" {
			ps = append(ps, problemf(fmt.Sprintf("%s.payloads[%d]", e.field, k), "expected a request body (an object), got %s", kind))
			break
		}
	}
	return ps
}

// scanInputs reads an inputs.json document from r and calls fn with each
// entry of its "data" list, decoded, in order, until fn returns false. An
// error about the document's shape is a *LineError without a path.
func scanInputs(ctx context.Context, r io.Reader, fn func(inputsEntry) bool) error {
	hl := &heldLimit{r: r, max: maxLine}
	lc := &lineCounter{r: hl}
	dec := json.NewDecoder(lc)
	dec.UseNumber()
	hl.dec = dec
	var before int64 // where the last token read starts, or whitespace before it
	at := func(off int64, msg string) error {
		line, col := lc.at(off)
		return &LineError{Line: line, Col: col, Msg: msg}
	}
	shape := func(msg string) error { return at(lc.skipSpace(before), msg) }
	syntax := func(err error) error {
		var se *json.SyntaxError
		var le *LineError
		switch {
		case errors.As(err, &le):
			return err
		case errors.As(err, &se):
			return at(lc.syntaxOffset(), "invalid JSON: "+se.Error())
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return at(lc.read, "the document ends too early: an inputs.json file is one JSON object")
		}
		return err
	}
	token := func() (json.Token, error) {
		before = dec.InputOffset()
		t, err := dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		return t, nil
	}
	if t, err := token(); err != nil {
		return err
	} else if t != json.Delim('{') {
		return shape(`expected a JSON object {"data": [{"session_id": …, "payloads": […]}, …]}`)
	}
	for dec.More() {
		t, err := token()
		if err != nil {
			return err
		}
		if t != "data" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return syntax(err)
			}
			continue
		}
		if t, err := token(); err != nil {
			return err
		} else if t != json.Delim('[') {
			return shape(`data: expected a list of sessions {"session_id": …, "payloads": […]}`)
		}
		for i := 0; dec.More(); i++ {
			if i%1024 == 0 && ctx.Err() != nil {
				return fmt.Errorf("stopped at session %d: %w", i, ctx.Err())
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return syntax(err)
			}
			e := inputsEntry{raw: raw, off: dec.InputOffset() - int64(len(raw)), field: fmt.Sprintf("data[%d]", i)}
			e.line, e.col = lc.at(e.off)
			if ps := decodeLine(raw, &e.rec); ps != nil {
				e.ps = e.place(ps)
			}
			if !fn(e) {
				return nil
			}
		}
		return nil
	}
	before = dec.InputOffset()
	return shape(`no "data" list: an inputs.json file is {"data": [{"session_id": …, "payloads": […]}, …]}`)
}

// place moves decoding problems from the entry's text to the file's lines:
// each problem's field is prefixed with the entry's, and its line is the
// entry's (Col is kept only when the entry is on one line).
func (e *inputsEntry) place(ps []problem) []problem {
	for i := range ps {
		p := &ps[i]
		if p.Field != "" {
			p.Field = e.field + "." + p.Field
		} else {
			p.Field = e.field
		}
		if bytes.IndexByte(e.raw, '\n') >= 0 {
			p.Col = 0
		} else if p.Col > 0 {
			p.Col += e.col - 1
		}
	}
	return ps
}

// lineCounter reads a document for a json.Decoder and tells the line and
// column of a byte offset already read, keeping only the bytes from the
// last offset asked for on (the decoder asks in order). Its heldLimit
// refuses to read on once the decoder would hold more than maxLine bytes of
// one value.
type lineCounter struct {
	r       *heldLimit
	read    int64  // bytes read so far
	pending []byte // bytes from base on
	base    int64
	line    int // 1-based line of base
	col     int // 1-based column of base
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if errors.Is(err, errHeld) {
		line, _ := c.at(c.r.dec.InputOffset())
		return 0, &LineError{Line: line, Msg: fmt.Sprintf("a value longer than %d MiB", maxLine>>20)}
	}
	c.pending = append(c.pending, p[:n]...)
	c.read += int64(n)
	return n, err
}

// skipSpace is the offset of the first byte from off on that is not JSON
// whitespace or a separator, among those read.
func (c *lineCounter) skipSpace(off int64) int64 {
	k := int(max(0, min(off-c.base, int64(len(c.pending)))))
	for k < len(c.pending) && bytes.IndexByte([]byte(" \t\r\n:,"), c.pending[k]) >= 0 {
		k++
	}
	return c.base + int64(k)
}

// syntaxOffset is where the first syntax error from the last offset asked
// for on is: the JSON value starting there, decoded again on its own, says
// (a decoder's own offsets are not the document's).
func (c *lineCounter) syntaxOffset() int64 {
	var v json.RawMessage
	var se *json.SyntaxError
	if err := json.Unmarshal(c.pending, &v); errors.As(err, &se) {
		return c.base + se.Offset - 1
	}
	return c.read
}

// at is the line and column of byte off; off must not be before the last
// offset asked for.
func (c *lineCounter) at(off int64) (int, int) {
	if c.line == 0 {
		c.line, c.col = 1, 1
	}
	k := int(max(0, min(off-c.base, int64(len(c.pending)))))
	chunk := c.pending[:k]
	if nl := bytes.LastIndexByte(chunk, '\n'); nl >= 0 {
		c.line += bytes.Count(chunk, []byte{'\n'})
		c.col = 1 + utf8.RuneCount(chunk[nl+1:])
	} else {
		c.col += utf8.RuneCount(chunk)
	}
	c.pending = c.pending[k:]
	c.base += int64(k)
	return c.line, c.col
}

// inputsTurns builds the turns of an inputs.json entry: each payload
// compacted (the bytes the run that wrote it sent) and sent as it is.
func (d *fileDataset) inputsTurns(c *convBuilder, raw []byte) error {
	var s inputsSession
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	if s.SessionID != nil {
		c.ID = *s.SessionID
	}
	for _, p := range s.Payloads {
		t, err := d.payloadTurn(p)
		if err != nil {
			return err
		}
		c.Turns = append(c.Turns, t)
	}
	c.Mode = MessageArrayWithResponses
	return nil
}

// isInputsJSON reports whether path holds an inputs.json document: a .json
// file whose first "data" entry has a "payloads" list (AIPerf's can_load).
func isInputsJSON(path string) bool {
	if len(path) < 5 || path[len(path)-5:] != ".json" {
		return false
	}
	f, err := inputfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	found := false
	_ = scanInputs(context.Background(), f, func(e inputsEntry) bool {
		found = e.rec.Payloads != nil
		return false
	})
	return found
}
