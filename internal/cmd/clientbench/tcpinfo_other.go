//go:build !linux

package main

import "net"

func segmentsOf(net.Conn) connSegments { return connSegments{} }
