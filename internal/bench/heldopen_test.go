package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestHeldOpenRepliesAreWarnedAbout: a server that ends every stream with
// [DONE] but holds its body open (no chunked terminator) until the client
// hangs up fails no request, none for the client's limits, and the audit says
// the server held the connections open, counting every reply.
func TestHeldOpenRepliesAreWarnedAbout(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}`+"\n\n"+
			"data: [DONE]\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(ts.Close)
	p := profile(ts.URL)
	p.NoServerMetrics = true
	run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	require.NoError(t, err)
	assert.Zero(t, run.Audit.ClientErrors, "no request failed for the client's own limits")
	assert.Contains(t, strings.Join(run.Audit.Warnings, "\n"),
		"12 replies had ended (data: [DONE] or their whole body) while the server held their connection open")
}

// TestCancelledRepliesAreNotHeldOpen: requests the client cancelled on
// purpose (--request-cancellation-rate) before their reply ended were cut by
// the client, not held open by a server that had ended them: against the
// mock, which ends every body, no reply is said to have been held open.
func TestCancelledRepliesAreNotHeldOpen(t *testing.T) {
	_, url := startMock(t, mock.Config{TTFT: 100, ITL: 1})
	p := profile(url)
	p.NoServerMetrics = true
	p.RequestCancellationRate = plan.Ptr(50.0)
	p.RequestCancellationDelay = plan.Ptr(0.01)
	run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	require.NoError(t, err)
	cancelled := 0
	for _, r := range run.Records {
		if r.Cancelled {
			cancelled++
		}
	}
	require.NotZero(t, cancelled, "the picked requests were cut before their first token")
	assert.NotContains(t, strings.Join(run.Audit.Warnings, "\n"), "held their connection open")
}
