package otelexport

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// answerKey carries an export's *answer, through the SDK, to the
// transport, which fills it in: what the collector answered, which the
// SDK's errors lose (a 429's status and Retry-After, a partial success's
// count).
type answerKey struct{}

// answer is the collector's answer to one export (status 0: none came).
type answer struct {
	status     string // "429 Too Many Requests"
	code       int
	retryAfter string
	body       string // the start of an error answer's body
	partial    bool   // a 2xx whose partial_success rejected points or said why
	rejected   int64
	message    string // the partial success's error_message
	cut        error  // the answer's body ended before its end (nil: it was read whole, or not read)
	late       bool   // the request, or its answer's body, failed at its deadline or after it
}

// Bounds of what the transport reads ahead of the SDK: an error answer's
// start, and a success answer (a partial success is a few bytes). Of an
// error answer cut at its bound, the last secretTail bytes are left out:
// a credential the answer echoes there, cut, could not be redacted.
const (
	maxErrorBody   = 4 << 10
	maxSuccessBody = 64 << 10
	secretTail     = 256
)

// observing is the exporter's transport: it notes each answer in the
// request's *answer, then hands the SDK the answer unchanged.
type observing struct{ base http.RoundTripper }

func (o observing) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.base.RoundTrip(req)
	a, _ := req.Context().Value(answerKey{}).(*answer)
	if a == nil || err != nil {
		if a != nil {
			a.late = pastDeadline(req.Context())
		}
		return resp, err
	}
	a.status, a.code, a.retryAfter = resp.Status, resp.StatusCode, resp.Header.Get("Retry-After")
	limit := maxErrorBody
	if ok := resp.StatusCode/100 == 2; ok {
		limit = maxSuccessBody
	}
	body := &watchedBody{ReadCloser: resp.Body, ctx: req.Context(), a: a}
	head, _ := io.ReadAll(io.LimitReader(body, int64(limit)))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), body), body}
	switch {
	case a.cut != nil: // a partial success is read whole, or not at all
	case resp.StatusCode/100 != 2:
		if len(head) == limit {
			head = head[:limit-secretTail]
		}
		a.body = strings.TrimSpace(strings.Map(printable, strings.ToValidUTF8(string(head), "?")))
	case len(head) < limit && resp.Header.Get("Content-Type") == "application/x-protobuf":
		a.rejected, a.message, a.partial = partialSuccess(head)
	}
	return resp, nil
}

// watchedBody is an answer's body that notes in a how its reading failed.
type watchedBody struct {
	io.ReadCloser
	ctx context.Context
	a   *answer
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.a.cut == nil {
		b.a.cut, b.a.late = err, pastDeadline(b.ctx)
	}
	return n, err
}

// pastDeadline reports whether ctx's deadline has come: what failed then
// failed for want of time, whichever of the export's timeouts (the
// reader's, the SDK's, the HTTP client's, all the same) cut it first, and
// whatever error it cut it with.
func pastDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d) || errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// printable replaces control characters (a terminal's escapes) by spaces.
func printable(r rune) rune {
	if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
		return ' '
	}
	return r
}

// partialSuccess reads an ExportMetricsServiceResponse's partial_success:
// like the SDK, a partial success is one that rejected points or said why.
func partialSuccess(b []byte) (rejected int64, message string, ok bool) {
	var resp colmetricpb.ExportMetricsServiceResponse
	if proto.Unmarshal(b, &resp) != nil || resp.PartialSuccess == nil {
		return 0, "", false
	}
	ps := resp.PartialSuccess
	return ps.RejectedDataPoints, ps.ErrorMessage, ps.RejectedDataPoints != 0 || ps.ErrorMessage != ""
}

// outcome is what became of one export.
type outcome struct {
	failure  error // nil: the collector accepted it (wholly, or partly: partial)
	cut      bool  // the failure: the run's interrupt cut it
	partial  bool
	rejected int64  // points a partial success rejected
	message  string // why, as the collector said
}

// judge words an export's outcome by what happened: the collector's HTTP
// status (and Retry-After), its partial success, an answer that is not
// OTLP's, a TLS failure, a refused or unreachable address, no answer in
// time (late: the export's deadline had come), or the run's interrupt.
// Only OTLP's partial success is one: a success answer whose body did not
// come whole is no answer, one that is not an OTLP response a failure.
// The body of an error answer is redacted whole, then clipped.
func judge(err error, a *answer, interrupted bool, timeout time.Duration, redact func(string) string) outcome {
	switch {
	case err == nil:
		return outcome{}
	case a.partial: // accepted, with points rejected
		return outcome{partial: true, rejected: a.rejected, message: a.message}
	case a.code/100 == 2 && a.cut != nil:
		return outcome{failure: transportFailure(err, interrupted, a.late, timeout, a.status),
			cut: interrupted && errors.Is(err, context.Canceled)}
	case a.code/100 == 2:
		return outcome{failure: fmt.Errorf("the collector answered HTTP %s, but not with an OTLP export response: %w",
			a.status, err)}
	case a.code != 0:
		msg := "the collector answered HTTP " + a.status
		if a.code/100 == 3 {
			msg += " (a redirect, not followed)"
		}
		if a.retryAfter != "" {
			msg += " (Retry-After: " + a.retryAfter + ")"
		}
		if a.body != "" {
			msg += ": " + clip(redact(a.body), 200)
		}
		return outcome{failure: errors.New(msg)}
	}
	return outcome{failure: transportFailure(err, interrupted, a.late, timeout, ""), cut: interrupted && errors.Is(err, context.Canceled)}
}

// transportFailure words an export that got no answer, or (began: the
// status of one, "" for none) not the whole of one; late: its deadline had
// come when it failed.
func transportFailure(err error, interrupted, late bool, timeout time.Duration, began string) error {
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	var ne net.Error
	why := "the export failed"
	switch {
	case errors.Is(err, context.Canceled) && interrupted:
		why = "the export was cut by the run's interrupt (Ctrl-C) before the collector answered"
	case late, errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		why = fmt.Sprintf("the collector did not answer within %s", timeout)
	case errors.Is(err, context.Canceled):
		why = "the export was cut as the exporter shut down, before the collector answered"
	case errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &verify),
		errors.As(err, &record), errors.As(err, &alert), strings.Contains(err.Error(), "tls: "),
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		why = "TLS with the collector failed (check its certificate, $OTEL_EXPORTER_OTLP_CERTIFICATE and the URL's scheme)"
	case errors.Is(err, syscall.ECONNREFUSED):
		why = "the collector is not reachable: it refused the connection"
	case errors.As(err, &dns):
		why = "the collector is not reachable: its host name could not be resolved"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		why = "the collector closed the connection without an answer"
	case errors.As(err, new(*net.OpError)):
		why = "the collector is not reachable"
	}
	if began != "" {
		why += fmt.Sprintf(" (it began an answer, HTTP %s, and did not finish it)", began)
	}
	return fmt.Errorf("%s: %w", why, err)
}

// clip cuts s to n characters, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
