//go:build !linux

package rxcoalesce

import "net"

// adopt returns c: the shared poller needs Linux's epoll.
func adopt(c net.Conn, _ Config) net.Conn { return c }
