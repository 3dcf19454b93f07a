package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

func TestReadReply(t *testing.T) {
	t.Parallel()
	rd := plan.NewRedactor("sk-reply-secret")
	long := strings.Repeat("x", 300)
	tests := []struct {
		name            string
		status          int
		body            string
		warning, detail string
	}{
		{"2xx empty", 200, "", "", ""},
		{"2xx success false", 200, `{"success": false}`, "server answered 200 with", ""},
		{"2xx success true", 200, `{"success": true}`, "", ""},
		{"2xx text is not recorded", 200, "sk-reply-secret", "", ""},
		{"FastAPI detail", 404, `{"detail":"Not Found"}`, "", "Not Found"},
		{"OpenAI error object", 400, `{"error":{"message":"profiler not enabled","code":400}}`, "", "profiler not enabled"},
		{"message first", 500, `{"message":"boom","detail":"other"}`, "", "boom"},
		{"validation list", 422, `{"detail":[{"loc":["query","timeout"],"msg":"bad"}]}`, "", `[{"loc":["query","timeout"],"msg":"bad"}]`},
		{"text, on one line", 500, "Internal\r\n  Server\tError\n", "", "Internal Server Error"},
		{"echoed secret", 403, "bad key Bearer sk-reply-secret", "", "bad key Bearer <redacted>"},
		{"JSON-escaped secret", 403, `{"detail":"key sk\u002dreply\u002dsecret"}`, "", "key <redacted>"},
		{"long text is cut", 500, long, "", long[:maxDetail] + "…"},
		{"secret cut at the limit", 500, long[:maxDetail-4] + " sk-reply-secret", "", long[:maxDetail-4] + " <re…"}, // redacted before the cut,
		{"invalid UTF-8", 500, "bad \xff byte", "", "bad \uFFFD byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warning, detail := readReply(tt.status, []byte(tt.body), rd)
			if tt.warning == "" {
				assert.Empty(t, warning)
			} else {
				assert.Contains(t, warning, tt.warning)
			}
			assert.Equal(t, tt.detail, detail)
		})
	}
}

// FuzzReplyBody: whatever a control route answers, reading it never panics,
// warns only for a 2xx, and keeps at most a short, single-line, valid UTF-8
// excerpt for a failure in which the client's secret never appears, however
// the server wrote it. (A secret of invalid UTF-8 cannot be shown as such
// in valid UTF-8; its bytes may still occur inside other characters.)
func FuzzReplyBody(f *testing.F) {
	f.Fuzz(func(t *testing.T, status int, body []byte, secret string) {
		status = 100 + (status%500+500)%500
		rd := plan.NewRedactor(secret)
		warning, detail := readReply(status, body, rd)
		ok := status >= 200 && status <= 299
		if warning != "" && !ok {
			t.Fatalf("warning for status %d: %q", status, warning)
		}
		if ok && detail != "" {
			t.Fatalf("detail for a 2xx: %q", detail)
		}
		if !utf8.ValidString(detail) {
			t.Fatalf("invalid UTF-8: %q", detail)
		}
		if strings.ContainsFunc(detail, func(r rune) bool { return unicode.IsControl(r) || r == '\n' }) {
			t.Fatalf("not one line: %q", detail)
		}
		if len(detail) > maxDetail+len("…")+len(plan.Redacted) {
			t.Fatalf("detail of %d bytes", len(detail))
		}
		s := strings.TrimSpace(secret)
		if utf8.ValidString(s) && utf8.RuneCountInString(s) >= 4 && !strings.Contains(plan.Redacted, s) && strings.Contains(detail, s) {
			t.Fatalf("secret %q in %q", s, detail)
		}
	})
}

// TestTransportErrorEchoIsRedacted: a server whose broken status line echoes
// the request's credential gets it quoted in Go's transport error; the call
// and the error keep it redacted.
func TestTransportErrorEchoIsRedacted(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := rec.serve(t, "a", func(_ int, w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString(strings.ReplaceAll("echo:"+r.Header.Get("Authorization"), " ", "_") + "\r\n\r\n")
		_ = buf.Flush()
	})
	c := newTestClient(authHeaders(), newFakeClock())
	calls, err := c.Reset(context.Background(), []string{srv.URL}, resetHook("/r", 0))
	require.Error(t, err)
	require.Len(t, calls, 1)
	assert.Contains(t, calls[0].Error, "malformed HTTP response", "the server's answer is quoted")
	assert.NotContains(t, calls[0].Error, secret)
	assert.NotContains(t, err.Error(), secret)

	p := c.Profiler([]string{srv.URL}, plan.ProfilerHook{Enabled: true, StartPath: "/s", StopPath: "/t", Timeout: time.Second})
	require.Error(t, p.Start(context.Background(), "profiling"))
	for _, call := range p.Calls() {
		assert.NotContains(t, call.Error, secret)
	}
}
