package shard

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"

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
	Err    string          `json:"err,omitempty"`
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
	dec *json.Decoder
	mu  sync.Mutex
	bw  *bufio.Writer
	enc *json.Encoder
}

// NewConn reads messages from r and writes them to w.
func NewConn(r io.Reader, w io.Writer) *Conn {
	bw := bufio.NewWriterSize(w, 1<<16)
	return &Conn{dec: json.NewDecoder(bufio.NewReaderSize(r, 1<<16)), bw: bw, enc: json.NewEncoder(bw)}
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

// Recv reads the next message (io.EOF once the other side closed).
func (c *Conn) Recv() (*Msg, error) {
	var m Msg
	if err := c.dec.Decode(&m); err != nil {
		return nil, err
	}
	return &m, nil
}
