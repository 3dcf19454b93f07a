// Package rxcoalesce reads a benchmark client's connections through one
// shared poller that coalesces receive wake-ups, as a network card's
// interrupt moderation (ethtool's rx-usecs) does.
//
// A client that sleeps in epoll between the server's writes is woken by each
// of them, and where the receive runs on the sender's CPU (loopback, or a
// client beside the server) that wake-up is the server's CPU time; so are
// the acknowledgements that the client's many small reads send back. While
// events are dense (most recent waits found one within two windows), the
// poller takes the ready connections without waiting, lets the readers it
// woke run and (with one P) looks again a Window after its last look; when
// it finds none it sleeps Window and looks again, twice, before it waits
// in epoll (the runtime's poller): a busy server is never asked to wake the
// client, and a read takes whatever arrived meanwhile in one go, which
// also means fewer acknowledgements back. While they are sparse, the poller waits in epoll, and an event is
// read as soon as it lands, as with a plain net.Conn.
//
// A reader still stamps what it reads when it reads it. What coalescing
// costs is that, while events are that dense, a read may come up to Window
// after its data arrived. And with one P (GOMAXPROCS 1, where it is on by
// default), while events are dense the poller's yields keep the runtime
// from looking at its own poller: a descriptor left there (a metrics
// scrape's connection) is read when the spell ends, or by sysmon's look
// every 10 ms.
package rxcoalesce

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// adopted counts the connections moved onto a poller.
var adopted atomic.Int64

// Adopted is how many connections this process moved onto a poller so far
// (none where there is no poller: off Linux).
func Adopted() int64 { return adopted.Load() }

// Config sets the coalescing.
type Config struct {
	// Window is the longest a segment waits for its read while the poller
	// coalesces (0: off, connections are left as they were dialled).
	Window time.Duration
}

// DialFunc is the shape of net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dialer wraps dial so that the TCP connections it makes are read through
// the process's poller of cfg. Where there is none (not Linux, or a
// connection that is not TCP) a connection is returned as dial made it.
func Dialer(dial DialFunc, cfg Config) DialFunc {
	if cfg.Window <= 0 {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return adopt(c, cfg), nil
	}
}

// density is a moving average, over about eight waits, of whether each
// found an event soon, in 1/256ths: three in four make it dense. From
// sparse, eleven hits in a row make it dense; from dense, two misses end it.
type density int

func (d *density) score(hit bool) {
	x := 0
	if hit {
		x = 256
	}
	*d += density((x - int(*d)) / 8)
}

func (d density) dense() bool { return d >= 192 }
