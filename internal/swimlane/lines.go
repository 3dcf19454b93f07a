package swimlane

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// A decoding worker takes batchLines lines at once, or fewer making
// batchBytes.
const (
	batchLines = 2048
	batchBytes = 1 << 20
)

// batch is a run of lines, decoded by a worker, taken in file order.
type batch struct {
	buf   []byte // the lines' bytes
	ends  []int  // each line's end in buf
	nums  []int  // each line's number in the file
	recs  []record
	err   error // the first line that is not a record
	done  chan struct{}
	extra error // reading stopped here (a line too long, a read error)
	lines int   // the first batch: the file's lines, estimated
}

// readLines decodes every non-blank line of path as a record, on every CPU,
// and calls each with them in file order; it stops at the first line that
// is not a record (naming it path:line), or when each fails. A path that is
// not a regular file is refused unread (inputfile.Open).
func readLines(ctx context.Context, path string, each func(*record, int) error, grow func(lines int)) error {
	f, err := inputfile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := max(1, runtime.GOMAXPROCS(0))
	work, ordered := make(chan *batch), make(chan *batch, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range work {
				b.decode(path)
			}
		})
	}
	go func() {
		defer close(ordered)
		defer close(work)
		split(ctx, path, f, size, work, ordered)
	}()
	err = collect(ctx, ordered, each, grow)
	cancel()
	for b := range ordered { // let the reader and the workers finish
		<-b.done
	}
	wg.Wait()
	return err
}

// collect hands the decoded batches to each, in order.
func collect(ctx context.Context, ordered <-chan *batch, each func(*record, int) error, grow func(int)) error {
	for b := range ordered {
		<-b.done
		if b.lines > 0 {
			grow(b.lines)
		}
		for i := range b.recs {
			if err := each(&b.recs[i], b.nums[i]); err != nil {
				return err
			}
		}
		if b.err != nil {
			return b.err
		}
		if b.extra != nil {
			return b.extra
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return ctx.Err() // the reader stops early when cancelled
}

// split reads the file's lines into batches, sent to the workers and, in
// the same order, to the collector.
func split(ctx context.Context, path string, f io.Reader, size int64, work, ordered chan<- *batch) {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	n := 0
	b := newBatch()
	first := true
	send := func(last bool) bool {
		if first && len(b.buf) > 0 {
			b.lines = int(min(size/int64(len(b.buf)/len(b.ends)+1), size/64, MaxRequests))
		}
		first = false
		select {
		case ordered <- b:
		case <-ctx.Done():
			return false
		}
		if last && len(b.ends) == 0 {
			close(b.done)
			return false
		}
		select {
		case work <- b:
		case <-ctx.Done():
			close(b.done)
			return false
		}
		b = newBatch()
		return true
	}
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		b.buf = append(b.buf, line...)
		b.ends, b.nums = append(b.ends, len(b.buf)), append(b.nums, n)
		if (len(b.ends) == batchLines || len(b.buf) >= batchBytes) && !send(false) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			b.extra = fmt.Errorf("%s:%d: the line is longer than %d bytes", path, n+1, MaxLineBytes)
		} else {
			b.extra = fmt.Errorf("read %s: %w", path, err)
		}
	}
	send(true)
}

func newBatch() *batch {
	return &batch{buf: make([]byte, 0, batchBytes+64<<10), done: make(chan struct{})}
}

// decode decodes the batch's lines, stopping at the first that is not a
// record.
func (b *batch) decode(path string) {
	defer close(b.done)
	b.recs = make([]record, 0, len(b.ends))
	start := 0
	for i, end := range b.ends {
		line := b.buf[start:end]
		start = end
		var rec record
		if err := decodeRecord(line, &rec); err != nil {
			b.err = fmt.Errorf("%s:%d: not a JSON record: %w", path, b.nums[i], err)
			return
		}
		b.recs = append(b.recs, rec)
	}
}
