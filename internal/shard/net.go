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
//
// A join with a wrong token, a number out of range or already taken is
// answered by an error message and the connection closed; nothing of the
// cell (its spec holds the API key) is sent before a join is accepted.

// TypeJoin is the first line of a worker that dialled the coordinator.
const TypeJoin = "join"

// joinTimeout bounds how long a connection may take to say who it is.
const joinTimeout = 10 * time.Second

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
	ln    net.Listener
	token string
	// Reject, when set, is told of each connection refused (it never
	// holds the token presented).
	Reject func(error)

	mu    sync.Mutex
	slots []chan net.Conn
	taken []bool
	done  chan struct{}
	once  sync.Once
}

// Listen listens on addr (HOST:PORT; port 0 picks one) for n workers
// presenting token.
func Listen(addr, token string, n int) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for the workers on %s: %w", addr, err)
	}
	l := &Listener{ln: ln, token: token, slots: make([]chan net.Conn, n), taken: make([]bool, n), done: make(chan struct{})}
	for i := range l.slots {
		l.slots[i] = make(chan net.Conn, 1)
	}
	go l.accept()
	return l, nil
}

// Port is the port listened on.
func (l *Listener) Port() int { return l.ln.Addr().(*net.TCPAddr).Port }

// Close stops listening; connections already handed out stay open, those
// joined but not taken are closed.
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
	})
}

// Conn waits for worker i's connection, joined, until ctx ends.
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

func (l *Listener) accept() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		go l.join(c)
	}
}

// join reads a connection's join line and hands it to its worker's slot,
// or refuses it.
func (l *Listener) join(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(joinTimeout))
	line, err := bufio.NewReader(io.LimitReader(c, 4096)).ReadBytes('\n')
	_ = c.SetReadDeadline(time.Time{})
	var j join
	if err == nil {
		err = json.Unmarshal(line, &j)
	}
	if err == nil {
		err = l.claim(j)
	}
	if err != nil {
		err = fmt.Errorf("refused a worker connection from %s: %w", c.RemoteAddr(), err)
		if l.Reject != nil { // first: the refused worker may be waiting on the answer
			l.Reject(err)
		}
		Fail(c, err)
		_ = c.Close()
		return
	}
	select {
	case l.slots[j.Worker] <- c:
	case <-l.done:
		_ = c.Close()
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

// Dial connects worker i to the coordinator at addr and joins with token,
// retrying for up to wait while the coordinator cannot be reached (a pod
// may start before its network is up).
func Dial(ctx context.Context, addr, token string, i int, wait time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(wait)
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			b, _ := json.Marshal(join{Type: TypeJoin, Worker: i, Token: token})
			if _, err := c.Write(append(b, '\n')); err != nil {
				_ = c.Close()
				return nil, fmt.Errorf("join the coordinator at %s: %w", addr, err)
			}
			return c, nil
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
