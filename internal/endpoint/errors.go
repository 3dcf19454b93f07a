package endpoint

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// readError classifies an error while reading a body: the caller's
// cancellation, the per-request timeout, or typ (the connection broke).
func (c *Client) readError(ctx, rctx context.Context, status int, typ string, err error) *metrics.Error {
	if e := c.contextError(ctx, rctx); e != nil {
		if e.Type != ErrTypeCancelled {
			e.Code = status
		}
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
		return &metrics.Error{Code: metrics.CancelledCode, Type: ErrTypeCancelled,
			Message: "request cancelled: " + context.Cause(ctx).Error()}
	case errors.Is(context.Cause(rctx), errDeliberate):
		return &metrics.Error{Code: metrics.CancelledCode, Type: ErrTypeCancelled,
			Message: "request cancelled on purpose (--request-cancellation-rate)"}
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
	hint := certHint(err)
	if hint == "" {
		hint = schemeHint(err)
	}
	if hint != "" {
		msg += "; " + hint
	}
	return &metrics.Error{Type: ErrTypeConnection, Message: c.redact(msg)}
}

// certHint is the fix of a server certificate the client does not accept:
// an unknown authority is trusted through SSL_CERT_FILE (read by Go on
// Linux and the BSDs; macOS uses its keychain), a certificate without this
// host's name needs one. "" for any other error (an expired certificate
// has no such fix).
func certHint(err error) string {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
	)
	switch {
	case errors.As(err, &unknown):
		return "trust the server's CA with SSL_CERT_FILE=ca.pem (Linux; on macOS, add it to the keychain)"
	case errors.As(err, &hostname):
		return "the server's certificate does not name this host: use a host it names, or a certificate with a subject alternative name for it"
	}
	return ""
}

// schemeHint is the fix of an https:// URL whose server speaks plain HTTP:
// net/http's "server gave HTTP response to HTTPS client" is a plain error,
// known by its text. "" for any other error.
func schemeHint(err error) string {
	if strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return "the server speaks plain HTTP: give --url with http://, not https://"
	}
	return ""
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
	if msg := ClientLimit(err); msg != "" {
		return &metrics.Error{Type: ErrTypeClient, Message: msg}
	}
	return nil
}

// ClientLimit says what to do when err is the client host out of a
// resource (file descriptors, local ports, socket buffers): it says
// nothing about the server. "" for any other error.
func ClientLimit(err error) string {
	for _, l := range clientLimits {
		if errors.Is(err, l.errno) {
			return l.msg
		}
	}
	return ""
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

// flatError returns the error of a reply that is an error object not
// wrapped in "error": vLLM's ErrorResponse ({"object": "error", "message",
// "type", "code"}), which vLLM sends as it is in a stream. A reply is one
// when its "object" is "error", or when it has no choices, usage or error
// member but a string "message" beside an integer "code" or a string
// "type". nil for any other reply; data is the reply w was decoded from.
func flatError(w *wireChunk, data []byte, status int) *metrics.Error {
	if !w.errorObject && (w.hasChoices || w.hasUsage() || len(w.Error) > 0 && !isNull(w.Error)) {
		return nil
	}
	message, typ, code, err := errorMembers(data)
	if err != nil {
		return nil
	}
	msg := errorText(message)
	if !w.errorObject && (!isText(message) || !isInteger(code) && !isText(typ)) {
		return nil
	}
	if msg == "" {
		msg = "the server sent an error object without a message"
	}
	return &metrics.Error{Code: errorCode(data, status), Type: ErrTypeStream, Message: msg}
}

// errorMembers reads the "message", "type" and "code" members of the JSON
// object data, matched as encoding/json matches a struct's fields (the
// last of a repeated key wins), with the scanner, which skips the rest
// unread: a reply of megabytes (an image's base64) costs a scan, not a
// decode.
func errorMembers(data []byte) (message, typ, code json.RawMessage, err error) {
	s := scanner{b: data}
	err = s.object(func(key []byte) error {
		raw, err := s.skip()
		switch {
		case keyIs(key, "message"):
			message = raw
		case keyIs(key, "type"):
			typ = raw
		case keyIs(key, "code"):
			code = raw
		}
		return err
	})
	return message, typ, code, err
}

// wholeError is the failure that the whole reply b of an API other than
// chat and completions (embeddings, rankings, images, audio transcription,
// Responses, Messages, ...) reports, judged before its shape: its "error"
// member (errorField), or vLLM's unwrapped error object, recognised as in
// a chat reply (flatError). nil for any other reply, and for one that is
// not a JSON object.
func wholeError(b []byte, status int) *metrics.Error {
	var w wireChunk
	if decodeChunk(b, &w) != nil {
		return nil
	}
	if e := errorField(w.Error, status); e != nil {
		return e
	}
	return flatError(&w, b, status)
}

// isText reports a JSON string that is not empty.
func isText(raw json.RawMessage) bool {
	var s string
	return len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil && s != ""
}

// isInteger reports a JSON integer.
func isInteger(raw json.RawMessage) bool {
	_, err := strconv.Atoi(string(raw))
	return err == nil
}

// errorCode is error.code when it is an integer HTTP error status
// (400-599), else status, the HTTP status of the reply. That is AIPerf's
// rule for an error object in a stream (sse_utils._raise_for_data_error):
// a server's own code such as -1, 99999999999999 or 200 is not an HTTP
// status and never stands for one.
func errorCode(raw json.RawMessage, status int) int {
	var e struct {
		Code json.RawMessage `json:"code"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &e) == nil {
		if n, err := strconv.Atoi(string(e.Code)); err == nil && n >= 400 && n <= 599 {
			return n
		}
	}
	return status
}

// errorText turns an error value into a message: a string as is, an object's
// "message" (or "msg"), any other JSON as its text.
func errorText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return truncate(s)
	}
	var obj struct {
		Message json.RawMessage `json:"message"`
		Msg     json.RawMessage `json:"msg"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &obj) == nil {
		for _, m := range []json.RawMessage{obj.Message, obj.Msg} {
			if len(m) > 0 && !isNull(m) {
				return errorText(m)
			}
		}
	}
	return truncate(string(raw))
}

// bodyMessage extracts a message from a non-2xx body: {"error":{"message"}},
// {"error":"…"}, {"message":…} or {"detail":…}; else the trimmed text.
func bodyMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &v) == nil {
		for _, m := range []json.RawMessage{v.Error, v.Message, v.Detail} {
			if msg := errorText(m); msg != "" {
				return msg
			}
		}
	}
	if isHTML(body) { // a web server's error page: its words, not its markup
		return truncate(htmlText(body))
	}
	return truncate(string(body))
}
