package endpoint

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// readError classifies an error while reading a body: the caller's
// cancellation, the per-request timeout, or typ (the connection broke).
func (c *Client) readError(ctx, rctx context.Context, status int, typ string, err error) *metrics.Error {
	if e := c.contextError(ctx, rctx); e != nil {
		e.Code = status
		return e
	}
	if e := clientError(err); e != nil {
		e.Code = status
		return e
	}
	return &metrics.Error{Code: status, Type: typ, Message: c.redact(err.Error())}
}

// contextError reports a cancelled or timed-out request, nil otherwise.
func (c *Client) contextError(ctx, rctx context.Context) *metrics.Error {
	switch {
	case ctx.Err() != nil:
		return &metrics.Error{Type: ErrTypeCancelled, Message: "request cancelled: " + context.Cause(ctx).Error()}
	case errors.Is(context.Cause(rctx), errDeliberate):
		return &metrics.Error{Type: ErrTypeCancelled, Message: "request cancelled on purpose (--request-cancellation-rate)"}
	case rctx.Err() != nil:
		return &metrics.Error{Type: ErrTypeTimeout, Message: fmt.Sprintf("request timed out after %s", c.timeout)}
	}
	return nil
}

// errDeliberate is the cause of a request aborted by
// --request-cancellation-rate.
var errDeliberate = errors.New("deliberate cancellation")

// transportError classifies a failure before the response headers arrived.
func (c *Client) transportError(ctx, rctx context.Context, err error) *metrics.Error {
	if e := c.contextError(ctx, rctx); e != nil {
		return e
	}
	if e := clientError(err); e != nil {
		return e
	}
	msg := connMessage(err)
	if certError(err) {
		msg += "; " + certHint
	}
	return &metrics.Error{Type: ErrTypeConnection, Message: c.redact(msg)}
}

// certHint is the fix of a server certificate the client does not accept.
const certHint = "trust the server's CA with SSL_CERT_FILE=ca.pem (or the certificate needs a subject alternative name for this host)"

// certError reports a failure to verify the server's TLS certificate: an
// unknown authority, a name the certificate does not hold, or an invalid
// (expired, not yet valid, misused) certificate.
func certError(err error) bool {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
	)
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify)
}

// clientLimits are the errors of a client host out of resources: they say
// nothing about the server.
var clientLimits = []struct {
	errno syscall.Errno
	msg   string
}{
	{syscall.EMFILE, "the client ran out of file descriptors (too many open files): raise `ulimit -n` or lower the concurrency"},
	{syscall.ENFILE, "the client host ran out of file descriptors (system-wide file table full)"},
	{syscall.EADDRNOTAVAIL, "the client ran out of local ports (cannot assign requested address): lower the concurrency or widen net.ipv4.ip_local_port_range"},
	{syscall.ENOBUFS, "the client host ran out of socket buffers (no buffer space available)"},
	{syscall.ENOMEM, "the client host ran out of memory for sockets"},
}

// clientError returns an ErrTypeClient error when err is the client host
// running out of a resource, nil otherwise.
func clientError(err error) *metrics.Error {
	for _, l := range clientLimits {
		if errors.Is(err, l.errno) {
			return &metrics.Error{Type: ErrTypeClient, Message: l.msg}
		}
	}
	return nil
}

// connMessage words a transport error without the request URL, naming the
// address for dial failures: "connect to 127.0.0.1:9: connection refused".
func connMessage(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		inner := op.Err
		var sys *os.SyscallError
		if errors.As(inner, &sys) {
			inner = sys.Err
		}
		if op.Addr != nil {
			return fmt.Sprintf("connect to %s: %v", op.Addr, inner)
		}
		return fmt.Sprintf("connect: %v", inner)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "server closed the connection before responding"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error() // without the URL
	}
	return err.Error()
}
