package endpoint

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// releaseWait is how long a finished request waits for the rest of its
	// body (a chunked terminator, a trailing newline) before returning: the
	// remainder of a well-behaved server is already there, so the
	// connection goes back to the pool before the next request needs it.
	releaseWait = time.Millisecond
	// DrainFor bounds the background wait for that remainder; a server
	// still holding the body open then loses the connection.
	DrainFor = 2 * time.Second
	// maxDrain bounds what is read after a response is decided, to reuse
	// the connection; a longer remainder closes it instead.
	maxDrain = 256 << 10
)

// tracked reads a response body and remembers whether it reached its end
// and whether reading it failed.
type tracked struct {
	r     io.Reader
	eof   bool
	err   error   // the last read error other than io.EOF
	trace *tracer // the request's, until its response ended (nil untraced)
	// onRead is Request.OnRead, until the response ended (nil: none).
	onRead func()
}

func (t *tracked) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if t.trace != nil {
		t.trace.body(n)
	}
	if n > 0 && t.onRead != nil {
		t.onRead()
	}
	switch {
	case err == io.EOF:
		t.eof = true
	case err != nil:
		t.err = err
	}
	return n, err
}

// decoded reads a compressed body; a decoding failure while the raw body
// read fine is errEncoding (the server sent a broken body), not a broken
// connection.
type decoded struct {
	r   io.Reader
	raw *tracked
	enc string
}

func (d *decoded) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF && d.raw.err == nil {
		err = fmt.Errorf("%w %s: the body does not decode (%v)", errEncoding, d.enc, err)
	}
	return n, err
}

// drains is a client's background drains of bodies left unread after
// their response ended: at most one per connection of its idle pool at
// once (a body drained goes back to that pool), and how many a server
// held open until the client gave up (HeldOpen).
type drains struct {
	slots    chan struct{}
	heldOpen atomic.Int64
	// closed ends every drain under way (Client.Close), which then waits
	// for them: pending counts them.
	closed  context.Context
	close   context.CancelFunc
	mu      sync.Mutex
	pending int
	idle    *sync.Cond
}

func newDrains(maxConns int) *drains {
	d := &drains{slots: make(chan struct{}, maxConns)}
	d.closed, d.close = context.WithCancel(context.Background())
	d.idle = sync.NewCond(&d.mu)
	return d
}

// release hands the connection of a finished request back: at once when the
// body was read to its end, else after draining what is left in the
// background, waiting releaseWait for it at most. done (cancelling the
// request's context rctx, which closes a connection not yet drained) runs
// last. A drain waits DrainFor for the body's end, or only releaseWait when
// every slot is taken: servers holding bodies open would otherwise keep a
// connection each for DrainFor, hundreds at a high rate, until the client
// ran out of descriptors. ended says the response had ended (read whole,
// or to its end marker, without an error): only such a body's connection
// can be one the server held open. A reply cut before it ended (cancelled
// on purpose, interrupted, timed out: rctx already done) is the client's
// doing: its connection is closed at once.
func (d *drains) release(rctx context.Context, body io.ReadCloser, rest *tracked, ended bool, done func()) {
	if rest.eof || rctx.Err() != nil {
		_ = body.Close()
		done()
		return
	}
	wait, slot := releaseWait, false
	select {
	case d.slots <- struct{}{}:
		wait, slot = DrainFor, true
	default:
	}
	d.mu.Lock()
	d.pending++
	d.mu.Unlock()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		stop := time.AfterFunc(wait, done) // a body held open is abandoned
		unclosed := context.AfterFunc(d.closed, done)
		_, _ = io.CopyN(io.Discard, rest, maxDrain)
		stop.Stop()
		unclosed()
		if ended && rctx.Err() != nil && !rest.eof { // given up on (by these waits, the run's end, its timeout)
			d.heldOpen.Add(1)
		}
		_ = body.Close()
		done()
		if slot {
			<-d.slots
		}
		d.mu.Lock()
		if d.pending--; d.pending == 0 {
			d.idle.Broadcast()
		}
		d.mu.Unlock()
	}()
	t := time.NewTimer(releaseWait)
	select {
	case <-drained:
	case <-t.C:
	}
	t.Stop()
}

// end abandons the drains under way (their bodies held open so far) and
// waits for them.
func (d *drains) end() {
	d.close()
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.pending > 0 {
		d.idle.Wait()
	}
}

// HeldOpen is how many responses' connections the server held open after
// the response had ended (its end marker or whole body read, the body not
// ended), until the client gave up waiting and closed them: after DrainFor,
// releaseWait when every drain slot was taken, or at Close.
func (c *Client) HeldOpen() int64 { return c.drains.heldOpen.Load() }

// errEncoding wraps the failures of decodeBody.
var errEncoding = errors.New("Content-Encoding")

// decodeBody returns the body to parse: r itself, or its gzip or deflate
// decoding when the server compressed it (a proxy may compress even when
// the request did not ask for it).
func decodeBody(h http.Header, r *tracked) (io.Reader, error) {
	enc := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding")))
	switch enc {
	case "", "identity":
		return r, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%w %s: the body is not gzip (%v)", errEncoding, enc, err)
		}
		return &decoded{r: zr, raw: r, enc: enc}, nil
	case "deflate":
		// RFC 9110's deflate is zlib-wrapped; some servers send raw deflate.
		br := bufio.NewReader(r)
		if head, err := br.Peek(2); err == nil && isZlibHeader(head) {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, fmt.Errorf("%w %s: the body is not zlib (%v)", errEncoding, enc, err)
			}
			return &decoded{r: zr, raw: r, enc: enc}, nil
		}
		return &decoded{r: flate.NewReader(br), raw: r, enc: enc}, nil
	}
	return nil, fmt.Errorf("%w %q: not supported (aiperf decodes gzip and deflate)", errEncoding, enc)
}

// isZlibHeader reports whether b starts a zlib stream (RFC 1950): method 8
// and a header checksum divisible by 31.
func isZlibHeader(b []byte) bool {
	return b[0]&0x0f == 8 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0
}
