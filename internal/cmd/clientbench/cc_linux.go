package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// listenWithCC listens on addr with TCP congestion control cc on the
// listener (TCP_CONGESTION; its accepted connections inherit it), or the
// system's when cc is "" or "system".
func listenWithCC(addr, cc string) (net.Listener, error) {
	lc := net.ListenConfig{}
	if cc != "" && cc != "system" {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc)
			}); err != nil {
				return err
			}
			if serr != nil {
				return fmt.Errorf("set TCP congestion control %q (net.ipv4.tcp_available_congestion_control lists those the kernel has; "+
					"-pinned-cc system keeps the system's): %w", cc, serr)
			}
			return nil
		}
	}
	return lc.Listen(context.Background(), "tcp", addr)
}

// congestionControl names the congestion control the pinned server uses:
// cc, or the system's default ("" or "system").
func congestionControl(cc string) string {
	if cc != "" && cc != "system" {
		return cc
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
	if err != nil {
		return "the system's"
	}
	return strings.TrimSpace(string(b)) + " (the system's)"
}
