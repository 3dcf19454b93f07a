package main

import (
	"net"

	"golang.org/x/sys/unix"
)

// connSegments is a connection's TCP segment counts from the kernel
// (TCP_INFO): received and sent, and of those the ones carrying data; the
// rest are pure ACKs (or window updates, SYN, FIN).
type connSegments struct{ in, dataIn, out, dataOut int64 }

func (a connSegments) plus(b connSegments) connSegments {
	return connSegments{a.in + b.in, a.dataIn + b.dataIn, a.out + b.out, a.dataOut + b.dataOut}
}

// segmentsOf reads c's counts (zero where TCP_INFO is not available).
func segmentsOf(c net.Conn) connSegments {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return connSegments{}
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return connSegments{}
	}
	var s connSegments
	_ = rc.Control(func(fd uintptr) {
		if ti, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			s = connSegments{int64(ti.Segs_in), int64(ti.Data_segs_in), int64(ti.Segs_out), int64(ti.Data_segs_out)}
		}
	})
	return s
}
