package otelexport

import (
	"errors"
	"fmt"
	"iter"
	"net/url"
	"os"
	"strings"
)

// headerEnvs are the variables the SDK's OTLP/HTTP metrics exporter takes
// headers from (the _TRACES_ one is not read: no traces are exported).
var headerEnvs = []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"}

// envHeader is one comma-separated entry of a headers variable, read as
// the SDK reads it: key=value, the key trimmed, the value percent-decoded
// then trimmed. err says why the SDK would drop it (silently).
type envHeader struct {
	pos        int    // its place in the variable, 1 for the first
	key, value string // value: decoded, else as written
	hasValue   bool   // an '=' was found
	err        error
}

// envHeaders yields each headers variable's name and entries, in order;
// blank entries (a trailing comma) are left out.
func envHeaders() iter.Seq2[string, envHeader] {
	return func(yield func(string, envHeader) bool) {
		for _, name := range headerEnvs {
			for i, entry := range strings.Split(os.Getenv(name), ",") {
				if strings.TrimSpace(entry) != "" && !yield(name, parseHeader(i+1, entry)) {
					return
				}
			}
		}
	}
}

// parseHeader reads the entry at pos as the SDK does.
func parseHeader(pos int, entry string) envHeader {
	k, v, ok := strings.Cut(entry, "=")
	h := envHeader{pos: pos, key: strings.TrimSpace(k), value: strings.TrimSpace(v), hasValue: ok}
	dec, err := url.PathUnescape(v)
	dec = strings.TrimSpace(dec)
	switch {
	case !ok:
		h.err = errors.New("it has no '=' (key=value)")
	case !validHeaderKey(h.key):
		h.err = errors.New("its key is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)")
	case err != nil:
		h.err = fmt.Errorf("the value of %q is not URL-encoded (a '%%' not followed by two hex digits: write %%25 for '%%')", h.key)
	case strings.ContainsFunc(dec, isCTL):
		h.value, h.err = dec, fmt.Errorf("the value of %q holds a control character, which no header may", h.key)
	default:
		h.value = dec
	}
	return h
}

// validHeaderKey reports whether key is an HTTP token, the SDK's rule.
func validHeaderKey(key string) bool {
	return key != "" && !strings.ContainsFunc(key, func(c rune) bool {
		return c > 0x7e || c <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", c)
	})
}

// isCTL is an ASCII control character other than a tab.
func isCTL(c rune) bool { return (c < ' ' && c != '\t') || c == 0x7f }

// CheckEnvHeaders refuses a malformed entry of $OTEL_EXPORTER_OTLP_HEADERS
// or $OTEL_EXPORTER_OTLP_METRICS_HEADERS (comma-separated key=value, the
// values URL-encoded), which the SDK would drop without a word: the export
// would go out without it (its credential, usually) and fail far away. The
// error names the variable, the entry's place and its key, never a value.
// When the metrics variable is set the SDK sends its headers alone, so
// only it is checked (EnvSecrets still redacts both).
// An unencoded space inside a value is accepted, as the SDK sends it.
func CheckEnvHeaders() error {
	var errs []error
	sent := sentHeaderEnv()
	for name, h := range envHeaders() {
		if h.err != nil && name == sent {
			errs = append(errs, fmt.Errorf("$%s: entry %d: %w", name, h.pos, h.err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(append(errs, errors.New("the OpenTelemetry exporter would drop such a header and send without it "+
		"(nothing was sent): write comma-separated key=value entries, each value URL-encoded (%2C for ',', %25 for '%')"))...)
}

// EnvSecrets are the header values of $OTEL_EXPORTER_OTLP_HEADERS and
// $OTEL_EXPORTER_OTLP_METRICS_HEADERS (key=value, comma-separated), which
// the SDK sends: credentials to redact wherever the run writes. Every value
// counts, whatever its header's name: those variables exist to carry
// vendors' credentials, whose names (x-honeycomb-team, ...) say nothing.
func EnvSecrets() []string {
	var out []string
	for _, h := range envHeaders() {
		if !h.hasValue || h.value == "" {
			continue
		}
		out = append(out, h.value)
		if _, cred, ok := strings.Cut(h.value, " "); ok { // "Bearer <token>": the token alone too
			out = append(out, strings.TrimSpace(cred))
		}
	}
	return out
}

// sentHeaderEnv is the headers variable the SDK sends: the metrics one when
// set (not blank), which replaces the generic one whole, else the generic.
func sentHeaderEnv() string {
	if strings.TrimSpace(os.Getenv(headerEnvs[1])) != "" {
		return headerEnvs[1]
	}
	return headerEnvs[0]
}

// sentEnvHeaders are the headers the SDK would send from the environment, read
// as it reads them (sentHeaderEnv's entries; a later entry of a key wins).
// Passing headers to the SDK replaces these, so they are passed along.
func sentEnvHeaders() map[string]string {
	out := map[string]string{}
	sent := sentHeaderEnv()
	for name, h := range envHeaders() {
		if name == sent && h.err == nil {
			out[h.key] = h.value
		}
	}
	return out
}

// withAuthorization is the environment's headers with Authorization set to
// auth (the --otel-url's user:password): the URL, given for this run, wins
// over the environment for that header alone (the SDK's rule too: headers
// given in code replace the environment's), whatever the case the
// environment wrote it in.
func withAuthorization(env map[string]string, auth string) map[string]string {
	out := make(map[string]string, len(env)+1)
	for k, v := range env {
		if !strings.EqualFold(k, "Authorization") {
			out[k] = v
		}
	}
	out["Authorization"] = auth
	return out
}
