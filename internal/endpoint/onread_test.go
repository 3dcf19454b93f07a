package endpoint

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onReadGuard bounds a wait that only a broken hook makes long.
const onReadGuard = time.Minute

// TestOnReadSeesBytesWithoutText: Request.OnRead is called for bytes
// that carry no text (a role chunk, an empty delta, an SSE comment): the
// server sends the reply's text only once the client has told it that it
// read the chunks before it, so without the hook the request never ends.
func TestOnReadSeesBytesWithoutText(t *testing.T) {
	seen := make(chan struct{})
	srv := newRawServer(t, func(s *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
		io.WriteString(conn, role+": keep-alive\n\n"+`data: {"choices":[{"index":0,"delta":{}}]}`+"\n\n")
		select {
		case <-seen:
		case <-s.done:
			return false
		}
		io.WriteString(conn, tokA+fin+done)
		return false
	})
	var once sync.Once
	var reads atomic.Int32
	req := chatReq(srv.url("/"), true)
	req.OnRead = func() { reads.Add(1); once.Do(func() { close(seen) }) }
	res := doWithin(t, newTestClient(t, Options{}), req)
	require.Nil(t, res.Err)
	assert.Equal(t, "A", res.Chunks[0].Text)
	assert.Positive(t, reads.Load())
}

// TestOnReadSeesAWholeBodyTrickle: a body that is not streamed counts too,
// byte by byte as it comes.
func TestOnReadSeesAWholeBodyTrickle(t *testing.T) {
	body := `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"AB"},"finish_reason":"stop"}]}`
	read := make(chan struct{}, len(body))
	srv := newRawServer(t, func(s *rawServer, conn net.Conn, _ int, _ *http.Request, _ []byte) bool {
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		for i := range len(body) {
			io.WriteString(conn, body[i:i+1])
			if i < len(body)-1 { // the next byte once this one was read
				select {
				case <-read:
				case <-s.done:
					return false
				}
			}
		}
		return true
	})
	req := chatReq(srv.url("/"), false)
	req.OnRead = func() {
		select {
		case read <- struct{}{}:
		default:
		}
	}
	res := doWithin(t, newTestClient(t, Options{}), req)
	require.Nil(t, res.Err)
	assert.Equal(t, "AB", res.Chunks[0].Text)
}

// doWithin is c.Do(req), failing the test if it does not end in time.
func doWithin(t *testing.T, c *Client, req Request) Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), onReadGuard)
	defer cancel()
	res := c.Do(ctx, req)
	require.NoError(t, ctx.Err(), "the request waited for a read the hook never reported")
	return res
}
