package dataset

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// Limits of a rowReader.
const (
	rowCursors  = 4    // readers kept open
	rowReadOn   = 1024 // the most rows a cursor reads through to reach a later one; further, it seeks
	rowSkipRead = 64   // rows read through at a time
)

// rowReader reads rows of a Parquet file back by number. Without the
// file's optional page index (pyarrow does not write one), a Parquet
// reader finds a row by reading its row group from the start, so reading
// each row with a fresh reader costs the row's position: a replay of a
// file in its order (a trace sorted by time, replayed in time) would be
// quadratic in its rows. rowReader keeps a few readers open where they
// stopped and reads on from the nearest one before the row asked for.
type rowReader struct {
	pf     *parquet.File
	firsts []int64 // first row (0-based) of each row group

	mu      sync.Mutex
	cursors []*rowCursor
	tick    uint64
	skip    []parquet.Row
}

// rowCursor is an open reader of row group g, before its row next.
type rowCursor struct {
	g    int
	rows parquet.Rows
	next int64
	used uint64
}

func newRowReader(pf *parquet.File, firsts []int64) *rowReader {
	return &rowReader{pf: pf, firsts: firsts, skip: make([]parquet.Row, rowSkipRead)}
}

// row reads row n (0-based), a copy of its own.
func (r *rowReader) row(n int64) (row parquet.Row, err error) {
	g, _ := slices.BinarySearch(r.firsts, n+1)
	g--
	if g < 0 {
		return nil, fmt.Errorf("row %d: before the first", n+1)
	}
	local := n - r.firsts[g]
	r.mu.Lock()
	defer r.mu.Unlock()
	var c *rowCursor
	err = guarded(func() (err error) {
		c = r.cursor(g, local)
		row, err = c.read(local, r.skip)
		return err
	})
	if err != nil {
		if c != nil {
			r.drop(c) // where it stands is unknown
		}
		return nil, fmt.Errorf("row %d: %w", n+1, err)
	}
	return row, nil
}

// cursor is the open reader of group g nearest before row local, or a new
// one in place of the least recently used.
func (r *rowReader) cursor(g int, local int64) *rowCursor {
	r.tick++
	var best *rowCursor
	for _, c := range r.cursors {
		if c.g == g && c.next <= local && (best == nil || c.next > best.next) {
			best = c
		}
	}
	if best == nil {
		if len(r.cursors) == rowCursors {
			lru := slices.MinFunc(r.cursors, func(a, b *rowCursor) int { return cmp.Compare(a.used, b.used) })
			r.drop(lru)
		}
		best = &rowCursor{g: g, rows: r.pf.RowGroups()[g].Rows()}
		r.cursors = append(r.cursors, best)
	}
	best.used = r.tick
	return best
}

func (r *rowReader) drop(c *rowCursor) {
	if i := slices.Index(r.cursors, c); i >= 0 {
		r.cursors = slices.Delete(r.cursors, i, i+1)
	}
	_ = guarded(c.rows.Close)
}

// read moves the cursor to row local (reading through the rows between,
// or seeking when they are many) and reads it.
func (c *rowCursor) read(local int64, skip []parquet.Row) (parquet.Row, error) {
	if local-c.next > rowReadOn {
		if err := c.rows.SeekToRow(local); err != nil {
			return nil, err
		}
		c.next = local
	}
	for c.next < local {
		k, err := c.rows.ReadRows(skip[:min(int64(len(skip)), local-c.next)])
		c.next += int64(k)
		if k == 0 || err != nil && !errors.Is(err, io.EOF) {
			return nil, noRow(err)
		}
	}
	one := make([]parquet.Row, 1)
	k, err := c.rows.ReadRows(one)
	if k != 1 {
		return nil, noRow(err)
	}
	c.next++
	return one[0].Clone(), nil // the reader reuses its buffers
}

func noRow(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// guarded runs fn, turning a panic of the Parquet reader (which a
// corrupt file can cause) into an error.
func guarded(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt Parquet data: %v", r)
		}
	}()
	return fn()
}
