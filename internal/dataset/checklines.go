package dataset

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"unicode/utf8"
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

// invalidUTF8 is the problem of a line that is not UTF-8, at its first bad
// byte: JSON is UTF-8 (AIPerf's reader refuses the file), and a decoder
// would send U+FFFD in its place.
func invalidUTF8(line []byte) (problem, bool) {
	if utf8.Valid(line) {
		return problem{}, false
	}
	at := 0
	for at < len(line) {
		r, n := utf8.DecodeRune(line[at:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		at += n
	}
	return problem{Col: utf8.RuneCount(line[:at]) + 1, Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02x): save the file as UTF-8", line[at])}, true
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
					line := b.buf[l.start:l.end]
					if p, bad := invalidUTF8(line); bad {
						b.probs[i] = []problem{p}
						continue
					}
					b.infos[i], b.probs[i] = check(line)
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

// maxLine is the longest line read, in bytes.
const maxLine = 256 << 20

var bom = []byte("\xef\xbb\xbf")

// scanLines calls fn with every non-blank line of r (without its line
// ending), its 1-based number and its byte offset, until fn returns false.
// fn must not keep line.
func scanLines(ctx context.Context, r io.Reader, fn func(line []byte, no int, off int64) bool) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	var off int64
	for no := 1; ; no++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				if err := ctx.Err(); err != nil { // a line of up to maxLine, read 1 MiB at a time
					return fmt.Errorf("stopped in line %d: %w", no, err)
				}
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
				if len(long) > maxLine {
					return fmt.Errorf("line %d is longer than %d MiB", no, maxLine>>20)
				}
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read line %d: %w", no, err)
		}
		size, start := len(line), int64(0)
		line = bytes.TrimRight(line, "\r\n")
		if no == 1 && bytes.HasPrefix(line, bom) {
			line, start = line[len(bom):], int64(len(bom))
		}
		if len(bytes.TrimSpace(line)) > 0 && !fn(line, no, off+start) {
			return nil
		}
		off += int64(size)
		if err == io.EOF {
			return nil
		}
		if no%4096 == 0 && ctx.Err() != nil {
			return fmt.Errorf("stopped at line %d: %w", no, ctx.Err())
		}
	}
}
