package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// misbehaving is a server streaming five words on choice `choice` of every
// reply, then usage that counts `completion` tokens.
func misbehaving(t *testing.T, choice, completion int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, tok := range []string{" one", " two", " three", " four", " five"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":%d,\"delta\":{\"content\":%q}}]}\n\n", choice, tok)
		}
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":24,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n",
			completion, 24+completion)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTextOnAnotherChoiceFailsTheRequest: a server streaming its reply on
// choice 1 (the client asked for one choice and measures choice 0) gives
// failed requests, not successes with an OSL of 0.
func TestTextOnAnotherChoiceFailsTheRequest(t *testing.T) {
	p := profile(misbehaving(t, 1, 5))
	p.Concurrency, p.RequestCount = plan.Ptr(1), plan.Ptr(4)
	run, err := Run(context.Background(), Options{Profile: p})
	require.ErrorContains(t, err, "every profiling request failed: 4 of 4 (e.g. InvalidResponse 200")
	require.NotNil(t, run)
	_, ok := run.Profiling.Get(metrics.TagOSL)
	assert.False(t, ok, "no request succeeded: there is no OSL")
	failed, _ := run.Profiling.Get(metrics.TagErrorRequestCount)
	assert.Equal(t, 4.0, failed.Value)
	require.Len(t, run.ErrorSummary, 1)
	e := run.ErrorSummary[0]
	assert.Equal(t, "InvalidResponse", e.Error.Type)
	assert.Contains(t, e.Error.Message, "generated text arrived only on choice 1 (5 chunk(s)), none on choice 0")
}

// TestZeroCompletionUsageIsNotTrusted: usage claiming 0 completion tokens
// beside five streamed words is flagged, and even under
// --use-server-token-count the OSL is the client's count, not 0.
func TestZeroCompletionUsageIsNotTrusted(t *testing.T) {
	p := profile(misbehaving(t, 0, 0))
	p.Concurrency, p.RequestCount = plan.Ptr(1), plan.Ptr(4)
	p.UseServerTokenCount = true
	run, err := Run(context.Background(), Options{Profile: p})
	require.NoError(t, err)
	osl, _ := run.Profiling.Get(metrics.TagOSL)
	require.NotNil(t, osl.Stats)
	assert.Equal(t, 5.0, osl.Stats.Min, "the client's count of the five words stands in for the server's 0")
	assert.Equal(t, 4, run.Audit.UsageUntrusted)
	for _, r := range run.Records {
		require.NotNil(t, r.Usage)
		assert.Equal(t, "completion_tokens is 0, fewer than the 5 chunk(s) of generated text that arrived", r.Usage.Untrusted)
	}
}

// TestProgressLineEscapesPhaseName: a phase named in a YAML file with
// escape sequences does not drive the terminal the progress line is drawn on.
func TestProgressLineEscapesPhaseName(t *testing.T) {
	pr := &load.Progress{Phase: &plan.Phase{Name: "p\x1b[2J\r\u009b1A"}}
	got := line(func() *load.Progress { return pr }, load.NewClock(), 0, false, noNote)
	assert.True(t, strings.HasPrefix(got, `[p\x1b[2J\r\u009b1A] 0/? done`), got)
}
