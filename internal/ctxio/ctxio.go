// Package ctxio stops a reader once a context ends: a parser that reads
// through it (a trace's long line, a metrics endpoint's body) gives up
// within one read of an interrupt or a timeout, however long the input.
package ctxio

import (
	"context"
	"io"
)

// Reader reads r until ctx ends, and then fails every read with ctx's
// error.
func Reader(ctx context.Context, r io.Reader) io.Reader { return reader{ctx, r} }

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
