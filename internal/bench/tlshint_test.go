package bench

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// acceptEach is a loopback listener that hands each connection to handle,
// and closes it after; its http:// URL.
func acceptEach(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				handle(conn)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestPlainHTTPAtATLSServerSaysHTTPS: --url http:// at a server that
// speaks only TLS failed every request with a connection error and nothing
// on what to do; the run's error goes on to say the server speaks TLS and
// to give https://. A plain server that drops the requests gets no such
// hint.
func TestPlainHTTPAtATLSServerSaysHTTPS(t *testing.T) {
	// As uvicorn (vLLM, SGLang) does, the server drops a connection whose
	// first bytes are not a TLS handshake, where a Go server would answer
	// them with a 400 that says why.
	cfg := httptest.NewTLSServer(nil).TLS // its certificate: the probe checks none
	for _, c := range []struct {
		handle func(net.Conn)
		hint   bool
	}{
		{func(conn net.Conn) { _ = tls.Server(conn, cfg).Handshake() }, true},
		{func(net.Conn) {}, false}, // drops every connection, speaking nothing
	} {
		url := acceptEach(t, c.handle)
		p := profile(url)
		p.Concurrency, p.RequestCount = plan.Ptr(1), plan.Ptr(2)
		_, err := Run(context.Background(), Options{Profile: p})
		require.ErrorIs(t, err, ErrAllFailed)
		assert.Contains(t, err.Error(), "(e.g. ConnectionError")
		hint := "the server at " + strings.TrimPrefix(url, "http://") + " speaks TLS (HTTPS): give --url with https://"
		assert.Equal(t, c.hint, strings.Contains(err.Error(), hint), err.Error())
	}
}
