package store

import (
	"context"
	"database/sql"
	"strings"
)

// batchRows is how many rows one batched INSERT writes: few statements
// (each crosses into SQLite once), far from SQLite's limit of 32,766
// parameters.
const batchRows = 256

// batch inserts rows many per statement: an INSERT prepared once for a full
// batch, and one for the rest at the end.
type batch struct {
	tx     *sql.Tx
	prefix string // "INSERT INTO t (cols) VALUES "
	cols   int
	full   *sql.Stmt
	args   []any
}

func newBatch(tx *sql.Tx, prefix string, cols int) *batch {
	return &batch{tx: tx, prefix: prefix, cols: cols}
}

// add queues a row, writing the batch when it is full.
func (b *batch) add(ctx context.Context, row ...any) error {
	b.args = append(b.args, row...)
	if len(b.args) < batchRows*b.cols {
		return nil
	}
	if b.full == nil {
		var err error
		if b.full, err = b.tx.PrepareContext(ctx, b.statement(batchRows)); err != nil {
			return err
		}
	}
	_, err := b.full.ExecContext(ctx, b.args...)
	b.args = b.args[:0]
	return err
}

// flush writes the queued rows.
func (b *batch) flush(ctx context.Context) error {
	if len(b.args) == 0 {
		return nil
	}
	_, err := b.tx.ExecContext(ctx, b.statement(len(b.args)/b.cols), b.args...)
	b.args = b.args[:0]
	return err
}

func (b *batch) statement(rows int) string {
	row := "(" + strings.Repeat("?, ", b.cols-1) + "?)"
	return b.prefix + strings.Repeat(row+", ", rows-1) + row
}

func (b *batch) close() {
	if b.full != nil {
		b.full.Close()
	}
}
