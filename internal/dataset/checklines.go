package dataset

import (
	"context"
	"io"
	"runtime"
	"sync"
)

// Batches of lines checked in parallel: a batch closes at batchLines lines
// or batchBytes bytes, and at most 2 batches per worker are in flight, so
// the memory checking takes is bounded whatever the file's size.
const (
	batchLines = 1024
	batchBytes = 1 << 20
)

// lineBatch is a run of consecutive lines and their checks.
type lineBatch struct {
	buf   []byte
	lines []lineRef
	infos []rowInfo
	probs [][]problem
	done  chan struct{}
}

type lineRef struct {
	start, end int
	no         int
	off        int64
}

// checkLines reads r's non-blank lines, runs check on them on every CPU,
// and calls fn with each line, its number, byte offset and check results,
// in file order, from the calling goroutine. fn must not keep line.
func checkLines(ctx context.Context, r io.Reader, check func([]byte) (rowInfo, []problem),
	fn func(line []byte, no int, off int64, info rowInfo, ps []problem)) error {
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *lineBatch, 2*workers)
	ordered := make(chan *lineBatch, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range work {
				for i, l := range b.lines {
					b.infos[i], b.probs[i] = check(b.buf[l.start:l.end])
				}
				close(b.done)
			}
		})
	}
	var scanErr error
	go func() {
		defer close(ordered)
		defer close(work)
		b := &lineBatch{done: make(chan struct{})}
		send := func() {
			b.infos, b.probs = make([]rowInfo, len(b.lines)), make([][]problem, len(b.lines))
			ordered <- b // the consumer waits for batches in this order
			work <- b
			b = &lineBatch{done: make(chan struct{})}
		}
		scanErr = scanLines(ctx, r, func(line []byte, no int, off int64) bool {
			start := len(b.buf)
			b.buf = append(b.buf, line...)
			b.lines = append(b.lines, lineRef{start, len(b.buf), no, off})
			if len(b.lines) >= batchLines || len(b.buf) >= batchBytes {
				send()
			}
			return true
		})
		if len(b.lines) > 0 {
			send()
		}
	}()
	for b := range ordered {
		<-b.done
		for i, l := range b.lines {
			fn(b.buf[l.start:l.end], l.no, l.off, b.infos[i], b.probs[i])
		}
	}
	wg.Wait()
	return scanErr
}
