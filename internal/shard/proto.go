package shard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// Message types (Msg.Type).
const (
	TypeSpec     = "spec"
	TypeHello    = "hello"
	TypePing     = "ping"
	TypePong     = "pong"
	TypeClock    = "clock"
	TypeReady    = "ready"
	TypeStart    = "start"
	TypeRecord   = "rec"
	TypeProgress = "progress"
	TypeDrained  = "drained"
	TypeDone     = "done"
	TypeError    = "error"
	TypeHalt     = "halt"
	TypeStop     = "stop"
	TypeBeat     = "beat" // a worker's heartbeat: it is alive (every Spec.HeartbeatNs)
)

// MaxMessage is the longest line either side accepts, newline included: a
// record of a response streamed in half a million chunks fits; a longer
// line is refused before it is held whole.
const MaxMessage = 16 << 20

// ErrTooLarge is the error of a line longer than the channel's limit;
// ErrMalformed of a line that is not a message.
var (
	ErrTooLarge  = errors.New("message too large")
	ErrMalformed = errors.New("malformed message")
)

// Msg is one line of the channel; Type says which fields it uses.
type Msg struct {
	Type  string `json:"t"`
	Phase string `json:"phase,omitempty"` // ready, start, progress, drained
	// Wall times in Unix ns: T0 is the coordinator's at a ping, TW the
	// worker's when it answered; At is a start instant (coordinator's) and
	// Start a worker clock's start (hello).
	T0     int64           `json:"t0,omitempty"`
	TW     int64           `json:"tw,omitempty"`
	At     int64           `json:"at,omitempty"`
	Start  int64           `json:"start,omitempty"`
	Offset int64           `json:"offset,omitempty"` // clock: worker wall − coordinator wall, ns
	Sent   int64           `json:"sent,omitempty"`   // progress: requests the phase sent so far
	Spec   *Spec           `json:"spec,omitempty"`
	Record *metrics.Record `json:"rec,omitempty"`
	Done   *Done           `json:"done,omitempty"`
	// Err is an error's message; on a stop, why the coordinator stops the
	// workers when it is not an interrupt (a worker failed).
	Err string `json:"err,omitempty"`
}

// Spec is a worker's share of the cell. The profile carries the cell's
// secrets (the API key, headers): it travels only on the channel.
type Spec struct {
	Worker  int          `json:"worker"`  // this worker's number, from 0
	Workers int          `json:"workers"` // how many share the cell
	Profile plan.Profile `json:"profile"` // control hooks off: the coordinator owns them
	Phases  []plan.Phase `json:"phases"`  // this worker's share of each phase (Split)
	Seed    int64        `json:"seed"`    // of the worker's arrivals (its own stream)
	Version string       `json:"version,omitempty"`
	// HeartbeatNs is how often the worker says it is alive (a beat) from
	// the moment it read its spec; 0: never.
	HeartbeatNs int64 `json:"heartbeat_ns,omitempty"`
}

// Done is what a worker reports once its load ended: its phase reports
// (on its own clock), its own audit and how far its timers lagged.
type Done struct {
	Reports  []load.PhaseReport `json:"reports"`
	Audit    result.Audit       `json:"audit"`
	StallP99 int64              `json:"stall_p99_ns"`
	StallMax int64              `json:"stall_max_ns"`
	Err      string             `json:"err,omitempty"` // how the worker's run ended, "" when well
}

// Conn is one end of the channel. Send may be called from any goroutine;
// Recv from one at a time.
type Conn struct {
	rd    *waitReader
	br    *bufio.Reader
	limit int
	line  []byte

	mu  sync.Mutex
	bw  *bufio.Writer
	enc *json.Encoder
}

// NewConn reads messages from r and writes them to w; a line longer than
// MaxMessage is an error (ErrTooLarge).
func NewConn(r io.Reader, w io.Writer) *Conn {
	bw := bufio.NewWriterSize(w, 1<<16)
	rd := &waitReader{r: r}
	return &Conn{rd: rd, br: bufio.NewReaderSize(rd, 1<<16), limit: MaxMessage, bw: bw, enc: json.NewEncoder(bw)}
}

// Limit sets the longest line Recv accepts, newline included (tests).
func (c *Conn) Limit(n int) *Conn {
	c.limit = n
	return c
}

// Send writes msgs, one line each, and flushes them.
func (c *Conn) Send(msgs ...*Msg) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		if err := c.enc.Encode(m); err != nil {
			return fmt.Errorf("send %s: %w", m.Type, err)
		}
	}
	if err := c.bw.Flush(); err != nil {
		return fmt.Errorf("send %s: %w", msgs[len(msgs)-1].Type, err)
	}
	return nil
}

// Recv reads the next message (io.EOF once the other side closed). A line
// over the limit is an error wrapping ErrTooLarge, found once the limit's
// bytes were read: no more is held.
func (c *Conn) Recv() (*Msg, error) {
	line, err := c.readLine()
	if err != nil {
		return nil, err
	}
	var m Msg
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return &m, nil
}

// readLine reads the next non-blank line, without its newline.
func (c *Conn) readLine() ([]byte, error) {
	for {
		c.line = c.line[:0]
		for {
			chunk, err := c.br.ReadSlice('\n')
			if len(c.line)+len(chunk) > c.limit {
				return nil, fmt.Errorf("%w: a line over %d bytes", ErrTooLarge, c.limit)
			}
			c.line = append(c.line, chunk...)
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) && len(bytes.TrimSpace(c.line)) > 0 {
				return nil, io.ErrUnexpectedEOF // a line cut short
			}
			return nil, err
		}
		if line := bytes.TrimSpace(c.line); len(line) > 0 {
			if cap(c.line) > 1<<20 {
				c.line = nil // a long line's buffer is not kept for the short ones
			}
			return line, nil
		}
	}
}

// Waiting is how long Recv has been waiting for the other side's next
// byte: 0 while it is not waiting (it has bytes to decode, or is not
// called) and before the other side sent anything (it is starting). A
// live peer that beats never waits long.
func (c *Conn) Waiting() time.Duration {
	since := c.rd.since.Load()
	if since == 0 || !c.rd.heard.Load() {
		return 0
	}
	return time.Duration(time.Now().UnixNano() - since)
}

// waitReader stamps when a read began waiting for bytes.
type waitReader struct {
	r     io.Reader
	since atomic.Int64 // Unix ns a Read began; 0: none under way
	heard atomic.Bool  // a byte was read
}

func (w *waitReader) Read(p []byte) (int, error) {
	w.since.Store(time.Now().UnixNano())
	n, err := w.r.Read(p)
	w.since.Store(0)
	if n > 0 {
		w.heard.Store(true)
	}
	return n, err
}
