package main

import (
	"net"

	"golang.org/x/sys/unix"
)

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
			s = connSegments{int64(ti.Segs_in), int64(ti.Data_segs_in), int64(ti.Segs_out), int64(ti.Data_segs_out),
				int64(ti.Busy_time), int64(ti.Snd_cwnd), int64(ti.Notsent_bytes), int64(ti.Pacing_rate), 1}
		}
	})
	return s
}
