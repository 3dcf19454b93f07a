package shard

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// A worker that runs elsewhere (a pod) dials the coordinator over TCP and
// joins with the cell's token and its number before the channel begins:
//
//	worker → coordinator   join     {"t":"join","worker":i,"token":...}
//	coordinator → worker   joined   {"t":"joined"}
//
// A join with a wrong token, a number out of range or already taken is
// answered by an error message and the connection closed; nothing of the
// cell (its spec holds the API key) is sent before a join is accepted. A
// connection closed before its answer (the coordinator had too many
// waiting to join) is dialled again.
//
// The port is open to anyone who reaches it: the listener keeps going
// through accept errors (out of file descriptors: it backs off and
// retries), holds at most maxPending connections that have not joined (a
// new one closes the oldest: a real worker joins at once, a flood of idle
// connections cannot keep it out), and summarises what it refuses instead
// of telling each.

// TypeJoin is the first line of a worker that dialled the coordinator;
// TypeJoined the coordinator's answer once it took the worker.
const (
	TypeJoin   = "join"
	TypeJoined = "joined"
)

const (
	// joinTimeout bounds how long a connection may take to say who it is,
	// and a worker's wait for the answer.
	joinTimeout = 10 * time.Second
	// maxPending bounds the connections waiting to join.
	maxPending = 64
	// warnEvery is how often the listener's warnings of one kind are told
	// (the first at once, the rest counted).
	warnEvery = 10 * time.Second
	// maxAcceptDelay is the longest back-off after an accept error.
	maxAcceptDelay = time.Second
)

// join is the first line of a dialled channel.
type join struct {
	Type   string `json:"t"`
	Worker int    `json:"worker"`
	Token  string `json:"token"`
}

// NewToken returns a fresh random token for a cell's workers.
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// Listener accepts the connections of a cell's n workers.
type Listener struct {
	ln      net.Listener
	token   string
	refused *summary // connections refused
	failed  *summary // accept errors

	mu      sync.Mutex
	slots   []chan net.Conn
	taken   []bool
	pending map[net.Conn]uint64 // connections not joined yet, by arrival
	seq     uint64
	done    chan struct{}
	once    sync.Once
}

// Listen listens on addr (HOST:PORT; port 0 picks one) for n workers
// presenting token. warn, when set, is told of the connections refused and
// the accept errors, summarised (it never holds a token presented).
func Listen(addr, token string, n int, warn func(error)) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for the workers on %s: %w", addr, err)
	}
	l := &Listener{ln: ln, token: token, slots: make([]chan net.Conn, n), taken: make([]bool, n),
		pending: map[net.Conn]uint64{}, done: make(chan struct{}),
		refused: &summary{warn: warn, what: "refused %d more worker connections"},
		failed:  &summary{warn: warn, what: "%d more accept errors"}}
	for i := range l.slots {
		l.slots[i] = make(chan net.Conn, 1)
	}
	go l.accept()
	return l, nil
}

// Port is the port listened on.
func (l *Listener) Port() int { return l.ln.Addr().(*net.TCPAddr).Port }

// Close stops listening and tells what was left untold; connections
// already handed out stay open, the others are closed.
func (l *Listener) Close() {
	l.once.Do(func() {
		close(l.done)
		_ = l.ln.Close()
		for _, s := range l.slots {
			select {
			case c := <-s:
				_ = c.Close()
			default:
			}
		}
		l.mu.Lock()
		for c := range l.pending {
			_ = c.Close()
		}
		l.mu.Unlock()
		l.refused.flush()
		l.failed.flush()
	})
}

// Conn waits for worker i's connection, joined, until ctx ends. The
// listener beats on it until the coordinator first writes on it (the
// worker's spec): the worker knows its coordinator is alive.
func (l *Listener) Conn(ctx context.Context, i int) (net.Conn, error) {
	select {
	case c := <-l.slots[i]:
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.done:
		return nil, errors.New("no longer listening for workers")
	}
}

// accept takes connections until Close, backing off after an error (out
// of file descriptors, for one) instead of giving up.
func (l *Listener) accept() {
	var delay time.Duration
	for {
		c, err := l.ln.Accept()
		if err != nil {
			select {
			case <-l.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			delay = min(max(2*delay, 5*time.Millisecond), maxAcceptDelay)
			l.failed.add(fmt.Errorf("accept a worker connection (retrying): %w", err))
			select {
			case <-time.After(delay):
			case <-l.done:
				return
			}
			continue
		}
		delay = 0
		l.admit(c)
		go l.join(c)
	}
}

// admit counts c among the connections waiting to join, closing the
// oldest of them when there are too many.
func (l *Listener) admit(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) >= maxPending {
		var oldest net.Conn
		for p, seq := range l.pending {
			if oldest == nil || seq < l.pending[oldest] {
				oldest = p
			}
		}
		delete(l.pending, oldest)
		_ = oldest.Close() // its join fails: refused
	}
	l.seq++
	l.pending[c] = l.seq
}

// join reads a connection's join line and hands it to its worker's slot,
// answered, or refuses it.
func (l *Listener) join(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(joinTimeout))
	line, err := bufio.NewReader(io.LimitReader(c, 4096)).ReadBytes('\n')
	_ = c.SetReadDeadline(time.Time{})
	l.mu.Lock()
	delete(l.pending, c)
	l.mu.Unlock()
	var j join
	if err == nil {
		err = json.Unmarshal(line, &j)
	}
	if err == nil {
		err = l.claim(j)
	}
	if err == nil {
		if err = NewConn(nil, c).Send(&Msg{Type: TypeJoined}); err != nil {
			l.release(j.Worker)
		}
	}
	if err != nil {
		select {
		case <-l.done: // closed with the listener
			_ = c.Close()
			return
		default:
		}
		err = fmt.Errorf("refused a worker connection from %s: %w", c.RemoteAddr(), err)
		l.refused.add(err) // first: the refused worker may be waiting on the answer
		Fail(c, err)
		_ = c.Close()
		return
	}
	k := keepAlive(c, joinedBeat) // until the spec: the coordinator may wait for every worker to join
	select {
	case <-l.done: // closed meanwhile: a slot taken now would never be drained, its beats never stopped
		_ = k.Close()
		return
	default:
	}
	select {
	case l.slots[j.Worker] <- k:
	case <-l.done:
		_ = k.Close()
	}
}

// claim checks a join and takes its worker's slot.
func (l *Listener) claim(j join) error {
	switch {
	case j.Type != TypeJoin:
		return fmt.Errorf("it did not join (first message %q)", j.Type)
	case subtle.ConstantTimeCompare([]byte(j.Token), []byte(l.token)) != 1:
		return errors.New("wrong token")
	case j.Worker < 0 || j.Worker >= len(l.slots):
		return fmt.Errorf("worker %d is not one of the cell's %d", j.Worker, len(l.slots))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.taken[j.Worker] {
		return fmt.Errorf("worker %d already joined", j.Worker)
	}
	l.taken[j.Worker] = true
	return nil
}

// release frees a slot whose connection broke before it was answered.
func (l *Listener) release(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.taken[i] = false
}

// summary tells the first of a kind of warning at once, then at most one
// every warnEvery with the count of those held back, and that count at
// the end (flush).
type summary struct {
	warn func(error)
	what string // the count's line: "%d more ..."

	mu   sync.Mutex
	last time.Time // the last told
	held int       // not told since
	err  error     // the last held back
}

func (s *summary) add(err error) {
	if s.warn == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() && time.Since(s.last) < warnEvery {
		s.held, s.err = s.held+1, err
		return
	}
	if s.held > 0 {
		err = fmt.Errorf("%w (and "+s.what+" in the last %s)", err, s.held, time.Since(s.last).Round(time.Second))
	}
	s.warn(err)
	s.last, s.held = time.Now(), 0
}

func (s *summary) flush() {
	if s.warn == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held > 0 {
		s.warn(fmt.Errorf(s.what+" (the last: %w)", s.held, s.err))
		s.held = 0
	}
}

// Dial connects worker i to the coordinator at addr and joins with token,
// retrying for up to wait while the coordinator cannot be reached or
// closes the connection before it answers (a pod may start before its
// network is up; a coordinator may have too many connections waiting). A
// refusal is an error at once. ctx bounds the connection's whole life:
// once it ends, a read from the connection (the join's answer, the spec,
// any later message) ends at once with an error wrapping ctx's cause, and
// each write has at most writeGrace.
func Dial(ctx context.Context, addr, token string, i int, wait time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(wait)
	var d net.Dialer
	for {
		raw, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c := bindConn(ctx, raw)
			var refused bool
			if refused, err = joinAs(c, token, i); err == nil {
				return c, nil
			}
			_ = c.Close()
			if refused {
				return nil, err
			}
		}
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) { // stopped between attempts
			err = fmt.Errorf("stopped (%w) after: %w", context.Cause(ctx), err)
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, fmt.Errorf("connect to the coordinator at %s: %w", addr, err)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

// joinAs sends the join line on c and reads the coordinator's answer, a
// byte at a time (what follows it is the channel's); refused reports an
// answer that was a refusal.
func joinAs(c net.Conn, token string, i int) (refused bool, err error) {
	b, _ := json.Marshal(join{Type: TypeJoin, Worker: i, Token: token})
	if _, err := c.Write(append(b, '\n')); err != nil {
		return false, fmt.Errorf("join: %w", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(joinTimeout))
	defer c.SetReadDeadline(time.Time{})
	var line []byte
	for one := make([]byte, 1); len(line) < 4096; {
		if _, err := io.ReadFull(c, one); err != nil {
			return false, fmt.Errorf("join: no answer: %w", err)
		}
		if one[0] == '\n' {
			break
		}
		line = append(line, one[0])
	}
	var m Msg
	if err := json.Unmarshal(line, &m); err != nil {
		return false, fmt.Errorf("join: the answer is not a message: %w", err)
	}
	switch m.Type {
	case TypeJoined:
		return false, nil
	case TypeError:
		return true, fmt.Errorf("the coordinator refused this worker: %s", m.Err)
	}
	return true, fmt.Errorf("join: the coordinator answered %q", m.Type)
}
