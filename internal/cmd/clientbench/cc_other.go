//go:build !linux

package main

import (
	"errors"
	"net"
)

// listenWithCC listens on addr; choosing a congestion control needs Linux.
func listenWithCC(addr, cc string) (net.Listener, error) {
	if cc != "" && cc != "system" {
		return nil, errors.New("-pinned-cc needs Linux (TCP_CONGESTION)")
	}
	return net.Listen("tcp", addr)
}

// congestionControl names the congestion control the pinned server uses.
func congestionControl(cc string) string {
	if cc != "" && cc != "system" {
		return cc
	}
	return "the system's"
}
