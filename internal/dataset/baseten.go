package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// The columns of a Baseten trace (AIPerf's baseten_trace): the four
// required, the session columns and the KV-cache hints forwarded in the
// request body. Other columns (duration_ttft_ms, output_text,
// request_canceled, …) are kept in the file and ignored, as AIPerf does.
const (
	btTime      = "timestamp_start_unix_ms"
	btPrompt    = "prompt"
	btInput     = "input_tokens"
	btOutput    = "output_tokens"
	btHashes    = "total_hashes"
	btBlock     = "block_size"
	btSession   = "provided_session_id"
	btPoorMan   = "poor_man_session_id"
	btBatchRows = 128
)

// BasetenSessionEnv is AIPerf's environment variable naming the column a
// Baseten trace's sessions are grouped by (provided_session_id, the
// default, or poor_man_session_id).
const BasetenSessionEnv = "AIPERF_DATASET_BASETEN_SESSION_COLUMN"

var btRequired = []string{btTime, btPrompt, btInput, btOutput}

// basetenFile is an open Baseten Parquet trace: the file, its row groups'
// first rows and the leaf column of each field it reads (-1: absent).
type basetenFile struct {
	pf      *parquet.File
	firsts  []int64    // first row (0-based) of each row group
	rows    *rowReader // reads rows back by number
	col     map[string]int
	session string // the session column ("" for none)
	min     int64  // the earliest timestamp: the zero of the trace's ms
}

// basetenRow is a row of a Baseten trace, as the replay uses it.
type basetenRow struct {
	ts, input, output int64
	prompt            string
	hashes            []int64
	block             int64 // 0: none
	session           *string
}

// isParquet reports whether path names a Parquet file (by its suffix, as
// AIPerf's detection does).
func isParquet(path string) bool { return strings.EqualFold(filepath.Ext(path), ".parquet") }

// openBasetenFile opens path as a Parquet file and maps the trace's
// columns, refusing one without the required columns.
func openBasetenFile(f *os.File) (*basetenFile, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var pf *parquet.File
	err = checkParquetFooter(f, st.Size())
	if err == nil {
		err = guarded(func() (err error) {
			pf, err = parquet.OpenFile(f, st.Size())
			return err
		})
	}
	if err != nil {
		return nil, &LineError{Path: f.Name(), Msg: fmt.Sprintf("not a readable Parquet file (%v): a baseten_trace is a Parquet export", err)}
	}
	b := &basetenFile{pf: pf, col: map[string]int{}}
	for i, path := range pf.Schema().Columns() {
		if _, seen := b.col[path[0]]; !seen {
			b.col[path[0]] = i
		}
	}
	var missing []string
	for _, name := range btRequired {
		if _, ok := b.col[name]; !ok {
			missing = append(missing, name)
		}
	}
	if missing != nil {
		return nil, &LineError{Path: f.Name(), Msg: fmt.Sprintf("missing column(s) %s: a baseten_trace needs %s",
			strings.Join(missing, ", "), strings.Join(btRequired, ", "))}
	}
	if b.session, err = basetenSessionColumn(b.col); err != nil {
		return nil, err
	}
	var first int64
	for _, rg := range pf.RowGroups() {
		b.firsts = append(b.firsts, first)
		first += rg.NumRows()
	}
	b.rows = newRowReader(pf, b.firsts)
	return b, nil
}

// basetenSessionColumn is the column sessions are grouped by: the one
// BasetenSessionEnv names (provided_session_id by default) when the file
// has it, else the other when it has that, else none (each row its own
// session), chosen from the schema as AIPerf does.
func basetenSessionColumn(cols map[string]int) (string, error) {
	want := os.Getenv(BasetenSessionEnv)
	switch want {
	case "":
		want = btSession
	case btSession, btPoorMan:
	default:
		return "", fmt.Errorf("%s=%q: expected %s or %s", BasetenSessionEnv, want, btSession, btPoorMan)
	}
	other := btPoorMan
	if want == btPoorMan {
		other = btSession
	}
	for _, c := range []string{want, other} {
		if _, ok := cols[c]; ok {
			return c, nil
		}
	}
	return "", nil
}

// hasBasetenColumns reports whether path is a Parquet file with a Baseten
// trace's required columns (AIPerf's can_load).
func hasBasetenColumns(path string) bool {
	if !isParquet(path) {
		return false
	}
	f, err := inputfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = openBasetenFile(f)
	return err == nil
}

// notBaseten is the error of detecting the type of a Parquet file that
// is not a Baseten trace.
func notBaseten(path string) error {
	return &LineError{Path: path, Msg: "a Parquet file without a Baseten trace's columns (" +
		strings.Join(btRequired, ", ") + "): give --custom-dataset-type baseten_trace to see what is missing"}
}

// scan calls fn with every row of the file (its 0-based number), batch by
// batch, so that memory is bounded whatever the file's size.
func (b *basetenFile) scan(ctx context.Context, fn func(n int64, row parquet.Row) error) error {
	buf := make([]parquet.Row, btBatchRows)
	for g, rg := range b.pf.RowGroups() {
		if err := guarded(func() error { return b.readRows(ctx, rg.Rows(), b.firsts[g], buf, fn) }); err != nil {
			return err
		}
	}
	return nil
}

func (b *basetenFile) readRows(ctx context.Context, rows parquet.Rows, n int64, buf []parquet.Row, fn func(int64, parquet.Row) error) error {
	defer rows.Close()
	for {
		if err := ctx.Err(); err != nil { // Ctrl-C inside a row group of millions
			return fmt.Errorf("stopped at row %d: %w", n+1, err)
		}
		k, err := rows.ReadRows(buf)
		for _, row := range buf[:k] {
			if ferr := fn(n, row); ferr != nil {
				return ferr
			}
			n++
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read row %d: %w", n+1, err)
		}
	}
}

// values are the values of field's column in row (nil when absent).
func (b *basetenFile) values(row parquet.Row, field string) []parquet.Value {
	c, ok := b.col[field]
	if !ok {
		return nil
	}
	var out []parquet.Value
	row.Range(func(i int, vs []parquet.Value) bool {
		if i == c {
			out = vs
		}
		return i < c
	})
	return out
}

// openBaseten indexes a Baseten Parquet trace (AIPerf's baseten_trace): a
// first pass finds the earliest timestamp, the trace's zero; a second
// checks every row and indexes it by session (rows of a session sorted by
// timestamp). Conversation reads a session's rows back from the file.
func openBaseten(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	f, err := inputfile.Open(o.InputFile)
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", TypeBasetenTrace, err)
	}
	d := &fileDataset{kind: TypeBasetenTrace, path: o.InputFile, o: o, tok: tok, f: f, files: files{list: []*os.File{f}}, stamp: stampOf(f)}
	if err := indexBaseten(ctx, d); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s dataset: %w", TypeBasetenTrace, err)
	}
	return d, nil
}

func indexBaseten(ctx context.Context, d *fileDataset) error {
	bt, err := openBasetenFile(d.f)
	if err != nil {
		return err
	}
	d.baseten = bt
	bt.min = math.MaxInt64
	err = bt.scan(ctx, func(_ int64, row parquet.Row) error {
		if v, p := scalarInt(bt.values(row, btTime), btTime, 0); p == nil && v != nil {
			bt.min = min(bt.min, *v)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	ix := newIndexer(d)
	ix.rowTS = []float64{}
	err = bt.scan(ctx, func(n int64, row parquet.Row) error {
		r, ps := bt.decode(row)
		if ps == nil && d.o.MaxISL > 0 && r.input > int64(d.o.MaxISL) {
			ix.lines, ix.skipped = ix.lines+1, ix.skipped+1
			return nil // --synthesis-max-isl
		}
		ms := float64(r.ts - bt.min)
		info := rowInfo{turns: 1, ts: ms, ts0: ms, first: ms, last: ms, session: r.session, unordered: true}
		if ps != nil {
			info = rowInfo{}
		}
		ix.add(nil, int(n+1), n, info, ps)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	if err := ix.finish(); err != nil {
		return err
	}
	d.orderByStart()
	return nil
}

// orderByStart puts the conversations in order of their start times (file
// order among equal ones), as AIPerf orders a Baseten trace's sessions.
func (d *fileDataset) orderByStart() {
	n := len(d.ts)
	perm := make([]int, n)
	for c := range perm {
		perm[c] = c
	}
	slices.SortStableFunc(perm, func(a, b int) int { return cmpFloat(d.ts[a], d.ts[b]) })
	rows := func(c int) (uint32, uint32) {
		if d.start == nil {
			return uint32(c), uint32(c + 1)
		}
		return d.start[c], d.start[c+1]
	}
	off, size := make([]int64, 0, len(d.off)), make([]uint32, 0, len(d.n))
	line, ts := make([]uint32, n), make([]float64, n)
	var start []uint32
	if d.start != nil {
		start = make([]uint32, 1, n+1)
	}
	for k, c := range perm {
		lo, hi := rows(c)
		off, size = append(off, d.off[lo:hi]...), append(size, d.n[lo:hi]...)
		line[k], ts[k] = d.line[c], d.ts[c]
		if start != nil {
			start = append(start, uint32(len(off)))
		}
	}
	d.off, d.n, d.line, d.ts, d.start = off, size, line, ts, start
}

// sortSessions sorts the rows of each conversation by their timestamps ts
// (stable: file order among equal times), as AIPerf sorts a Baseten
// session's rows.
func (d *fileDataset) sortSessions(ts []float64) {
	type row struct {
		ts  float64
		off int64
		n   uint32
	}
	var buf []row
	for c := range len(d.start) - 1 {
		lo, hi := d.start[c], d.start[c+1]
		buf = buf[:0]
		for j := lo; j < hi; j++ {
			buf = append(buf, row{ts[j], d.off[j], d.n[j]})
		}
		slices.SortStableFunc(buf, func(a, b row) int { return cmpFloat(a.ts, b.ts) })
		for k, r := range buf {
			d.off[lo+uint32(k)], d.n[lo+uint32(k)] = r.off, r.n
		}
	}
}

// basetenConversation reads conversation i's rows back: each row a turn
// whose prompt is sent as recorded (a completions prompt), with
// max(1, output_tokens) as its max tokens and AIPerf's per-row body
// fields: min_tokens (the output length; not with --no-force-min-tokens),
// hash_ids (total_hashes, when any) and block_size (when given), neither
// with --omit-kv-hints.
func (d *fileDataset) basetenConversation(i int, lo, hi uint32) (Conversation, error) {
	c := Conversation{Mode: DeltasWithoutResponses}
	if hi-lo > 1 {
		c.Mode = MessageArrayWithResponses
	}
	for r := lo; r < hi; r++ {
		row, err := d.baseten.rows.row(d.off[r])
		if err != nil {
			return Conversation{}, fmt.Errorf("re-read %s: %w", d.path, err)
		}
		br, ps := d.baseten.decode(row)
		if ps != nil {
			return Conversation{}, fmt.Errorf("re-read %s row %d (was the file changed since it was opened?): %s: %s",
				d.path, d.off[r]+1, ps[0].Field, ps[0].Msg)
		}
		if c.ID == "" && br.session != nil {
			c.ID = *br.session
		}
		out := max(1, int(br.output))
		if d.o.MaxOSL > 0 {
			out = min(out, d.o.MaxOSL) // --synthesis-max-osl: max_tokens and min_tokens
		}
		t := Turn{Text: br.prompt, InputTokens: d.tok.Count(br.prompt), MaxTokens: out, Extra: map[string]any{}}
		if !d.o.Replay.NoMinTokens { // --no-force-min-tokens lets EOS end it
			t.Extra["min_tokens"] = out
		}
		if len(br.hashes) > 0 && !d.o.Replay.OmitKVHints {
			t.Extra["hash_ids"] = br.hashes
		}
		if br.block > 0 && !d.o.Replay.OmitKVHints {
			t.Extra["block_size"] = br.block
		}
		ms := float64(br.ts - d.baseten.min)
		d.setTiming(&t, &ms, nil)
		c.Turns = append(c.Turns, t)
	}
	if c.ID == "" {
		c.ID = fmt.Sprintf("%s:%d", filepath.Base(d.path), d.line[i])
	}
	return c, nil
}
