package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// The forms a public dataset's local file comes in.
const (
	formatJSON    = "JSON array"
	formatJSONL   = "JSON Lines"
	formatParquet = "Parquet"
)

// recordFile is a public dataset's local file read record by record, in
// the forms people keep these datasets in: a JSON array of records (as
// ShareGPT_V3 is published), JSON Lines, or Parquet (as Hugging Face serves
// every dataset). It is indexed in one pass and each kept record is read
// back when it is replayed, so memory holds the index, not the file.
//
// A Parquet file's kept records are written, as JSON, to an unlinked
// temporary file while it is indexed, and read back from there: a Parquet
// reader finds a row by reading its row group from the start (without the
// optional page index, which pyarrow does not write), so replaying its
// rows in random order would cost the square of their number.
type recordFile struct {
	path   string
	f      *os.File // the file records are read back from: the spill, for Parquet
	format string
	off    []int64  // kept record k: its byte offset in f
	n      []uint32 // its length in bytes
	row    []int64  // its row (0-based), for Parquet
	max    int      // the longest record read, in bytes
}

// keepFunc judges one record (raw JSON of an object, not to be kept): keep
// it, drop it (a dataset's filter), or refuse it with a problem.
type keepFunc func(raw []byte) (keep bool, p *problem)

// openRecordFile opens path and tells its form from its first bytes.
func openRecordFile(path string) (*recordFile, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	r := &recordFile{path: path, f: f, format: formatJSONL, max: maxLine}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = bytes.TrimLeft(bytes.TrimPrefix(head[:n], bom), " \t\r\n")
	switch {
	case bytes.HasPrefix(head, []byte("PAR1")):
		r.format = formatParquet
	case bytes.HasPrefix(head, []byte("[")):
		r.format = formatJSON
	}
	return r, nil
}

// index reads every record, keeping those keep accepts. It returns how
// many records the file holds and every problem found as *LineErrors
// (capped; a Parquet record's "line" is its 1-based row).
func (r *recordFile) index(ctx context.Context, what string, keep keepFunc) (records int, err error) {
	var bad []offProblem
	more := 0
	report := func(p offProblem) {
		if len(bad) < maxProblems {
			bad = append(bad, p)
		} else {
			more++
		}
	}
	judge := func(raw []byte, off int64, row int) (kept bool) {
		records++
		ok, p := keep(raw)
		kept = ok && p == nil
		switch {
		case p != nil && row > 0:
			report(offProblem{line: row, p: problem{Field: p.Field, Msg: p.Msg}})
		case p != nil:
			report(offProblem{off: off + int64(max(p.at-1, 0)), noCol: p.at == 0, p: problem{Field: p.Field, Msg: p.Msg}})
		case ok:
			r.off, r.n = append(r.off, off), append(r.n, uint32(len(raw)))
			if row > 0 {
				r.row = append(r.row, int64(row-1))
			}
		}
		return kept
	}
	switch r.format {
	case formatParquet:
		err = r.scanParquet(ctx, judge, report)
	case formatJSON:
		err = r.scanArray(ctx, what, judge, report)
	default:
		err = scanLines(ctx, io.NewSectionReader(r.f, 0, 1<<62), func(line []byte, no int, off int64) bool {
			if len(line) > r.max {
				report(offProblem{off: off, p: problemf("", "record longer than %s", mib(r.max))})
				return true
			}
			judge(line, off, 0)
			return true
		})
	}
	if err != nil {
		return records, err
	}
	if err := r.place(bad, more); err != nil {
		return records, err
	}
	if records == 0 {
		return 0, &LineError{Path: r.path, Msg: fmt.Sprintf("no records: the %s file holds no %s", r.format, what)}
	}
	return records, nil
}

// scanArray reads a JSON array of records.
func (r *recordFile) scanArray(ctx context.Context, what string, judge func([]byte, int64, int) bool, report func(offProblem)) error {
	held := &heldLimit{r: bufio.NewReaderSize(io.NewSectionReader(r.f, 0, 1<<62), 1<<20), max: int64(r.max) + 1<<16}
	dec := json.NewDecoder(held)
	held.dec = dec
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		report(offProblem{p: problemf("", "expected a JSON array of %s", what)})
		return nil
	}
	for n := 0; dec.More(); n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return fmt.Errorf("stopped at record %d: %w", n, ctx.Err())
		}
		var raw json.RawMessage
		start := dec.InputOffset()
		err := dec.Decode(&raw)
		end := dec.InputOffset()
		if errors.Is(err, errHeld) || err == nil && len(raw) > r.max {
			report(offProblem{off: r.valueStart(start), p: problemf("", "record %d is longer than %s", n+1, mib(r.max))})
			return nil
		}
		if err != nil {
			report(syntaxProblem(dec, err))
			return nil
		}
		judge(raw, end-int64(len(raw)), 0)
	}
	if _, err := dec.Token(); err != nil {
		report(syntaxProblem(dec, err))
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		report(offProblem{off: dec.InputOffset(), p: problemf("", "unexpected data after the top-level array")})
	}
	return nil
}

// valueStart is the offset of the first byte from off on that is not
// JSON whitespace or a comma, looking at most 4 KiB on.
func (r *recordFile) valueStart(off int64) int64 {
	var buf [4096]byte
	n, _ := r.f.ReadAt(buf[:], off)
	k := 0
	for k < n && bytes.IndexByte([]byte(" \t\r\n,"), buf[k]) >= 0 {
		k++
	}
	return off + int64(k)
}

// errHeld is heldLimit's refusal.
var errHeld = errors.New("a JSON value longer than the limit")

// heldLimit reads for a json.Decoder, refusing to read on once it holds
// more than max bytes it has not consumed: one value's bytes (the decoder
// holds a value whole before it returns it).
type heldLimit struct {
	r    io.Reader
	dec  *json.Decoder
	read int64
	max  int64
}

func (h *heldLimit) Read(p []byte) (int, error) {
	room := h.max - (h.read - h.dec.InputOffset())
	if room <= 0 {
		return 0, errHeld
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := h.r.Read(p)
	h.read += int64(n)
	return n, err
}

// mib says a byte count in MiB, or in bytes below one.
func mib(n int) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// scanParquet reads a Parquet file's rows, each as the JSON object of its
// columns; those judge keeps (at their offset there) are written one after
// another to a spill file that replaces the Parquet file once every row is
// read. A file that breaks the Parquet reader is refused, not a crash.
func (r *recordFile) scanParquet(ctx context.Context, judge func([]byte, int64, int) bool, report func(offProblem)) (err error) {
	spill, err := os.CreateTemp("", "aiperf-parquet-*.json")
	if err != nil {
		return fmt.Errorf("create a temporary file for the records of %s (set TMPDIR to a writable directory): %w", r.path, err)
	}
	os.Remove(spill.Name()) // gone with its last descriptor, even after a crash
	w := bufio.NewWriterSize(spill, 1<<20)
	var at int64
	defer func() {
		if err == nil {
			if err = w.Flush(); err != nil {
				err = fmt.Errorf("write the records of %s to a temporary file (TMPDIR needs room for them): %w", r.path, err)
			}
		}
		if err != nil {
			spill.Close()
			return
		}
		r.f.Close()
		r.f = spill
	}()
	return r.readParquet(ctx, func(raw []byte, row int) {
		if len(raw) > r.max {
			report(offProblem{line: row, p: problemf("", "row longer than %s", mib(r.max))})
			return
		}
		if judge(raw, at, row) { // kept at offset at of the spill
			w.Write(raw) // an error stays in w, for Flush
			at += int64(len(raw))
		}
	})
}

// readParquet hands each row of the Parquet file to fn, as JSON. The
// Parquet reader's panics (a corrupt file can cause them) are errors.
func (r *recordFile) readParquet(ctx context.Context, fn func(raw []byte, row int)) error {
	st, err := r.f.Stat()
	if err != nil {
		return err
	}
	var rows *parquet.Reader
	err = checkParquetFooter(r.f, st.Size())
	if err == nil {
		err = guarded(func() error {
			pf, err := parquet.OpenFile(r.f, st.Size())
			if err == nil {
				rows = parquet.NewReader(pf)
			}
			return err
		})
	}
	if err != nil {
		return &LineError{Path: r.path, Msg: fmt.Sprintf("not a readable Parquet file: %v", err)}
	}
	for row := 1; ; row++ {
		if row%1024 == 0 && ctx.Err() != nil {
			return fmt.Errorf("stopped at row %d: %w", row, ctx.Err())
		}
		raw, err := readParquetRow(rows)
		if err == io.EOF {
			break
		}
		if err != nil {
			return &LineError{Path: r.path, Line: row, Msg: fmt.Sprintf("unreadable Parquet row: %v", err)}
		}
		fn(raw, row)
	}
	return nil
}

// checkParquetFooter checks that the footer a Parquet file's trailer
// declares fits in the file, before the reader allocates that many bytes
// (a damaged length would ask for up to 4 GiB).
func checkParquetFooter(f io.ReaderAt, size int64) error {
	var trailer [8]byte
	if size < 12 {
		return fmt.Errorf("%d bytes is too short for a Parquet file", size)
	}
	if _, err := f.ReadAt(trailer[:], size-8); err != nil {
		return err
	}
	if string(trailer[4:]) != "PAR1" {
		return fmt.Errorf("it does not end with the PAR1 magic")
	}
	if n := int64(binary.LittleEndian.Uint32(trailer[:4])); n > size-12 {
		return fmt.Errorf("its footer is said to be %d bytes, more than the file holds", n)
	}
	return nil
}

// readParquetRow reads the next row as the JSON object of its columns.
func readParquetRow(rows *parquet.Reader) (raw []byte, err error) {
	err = guarded(func() error {
		m := map[string]any{}
		if err := rows.Read(&m); err != nil {
			return err
		}
		raw, err = json.Marshal(m)
		return err
	})
	return raw, err
}

// place turns problems into LineErrors, reading the file once more to find
// the lines and columns of those placed at byte offsets.
func (r *recordFile) place(bad []offProblem, more int) error {
	ps := problems{path: r.path, more: more}
	br := bufio.NewReaderSize(io.NewSectionReader(r.f, 0, 1<<62), 1<<20)
	var off int64
	line, col := 1, 1
	for _, b := range bad {
		if b.line > 0 {
			ps.add(b.line, b.p)
			continue
		}
		for ; off < b.off; off++ {
			c, err := br.ReadByte()
			if err != nil {
				break
			}
			switch {
			case c == '\n':
				line, col = line+1, 1
			case utf8.RuneStart(c):
				col++
			}
		}
		if !b.noCol {
			b.p.Col = col
		}
		ps.add(line, b.p)
	}
	return ps.err()
}

// Len is the number of records kept.
func (r *recordFile) Len() int { return len(r.off) }

// record reads kept record k back as JSON.
func (r *recordFile) record(k int) ([]byte, error) {
	raw := make([]byte, r.n[k])
	if _, err := r.f.ReadAt(raw, r.off[k]); err != nil {
		return nil, fmt.Errorf("re-read %s: %w", r.where(k), err)
	}
	return raw, nil
}

// where names kept record k for an error.
func (r *recordFile) where(k int) string {
	if r.format == formatParquet {
		return fmt.Sprintf("%s at row %d", r.path, r.row[k]+1)
	}
	return fmt.Sprintf("%s at byte %d", r.path, r.off[k])
}
