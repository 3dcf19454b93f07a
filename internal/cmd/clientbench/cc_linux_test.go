package main

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestListenWithCC: the congestion control set on the listener is the one
// its accepted connections send with (reno: always built in and allowed to
// anyone); an unknown one is refused, naming it.
func TestListenWithCC(t *testing.T) {
	assert.Equal(t, "reno", acceptedCC(t, "reno"))
	system, err := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(system)), acceptedCC(t, "system"))

	_, err = listenWithCC("127.0.0.1:0", "no-such-cc")
	require.ErrorContains(t, err, `set TCP congestion control "no-such-cc"`)
}

// acceptedCC is the congestion control of a connection accepted by
// listenWithCC(cc).
func acceptedCC(t *testing.T, cc string) string {
	ln, err := listenWithCC("127.0.0.1:0", cc)
	require.NoError(t, err)
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	s, err := ln.Accept()
	require.NoError(t, err)
	defer s.Close()
	raw, err := s.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	var got string
	require.NoError(t, raw.Control(func(fd uintptr) {
		got, err = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	}))
	require.NoError(t, err)
	return strings.TrimRight(got, "\x00")
}
