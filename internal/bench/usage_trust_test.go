package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// claiming is a server streaming words (five " hello" chunks, or none)
// then usage that claims `completion` tokens.
func claiming(t *testing.T, words, completion int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n")
		for range words {
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" hello\"}}]}\n\n")
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n",
			completion, 10+completion)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestUsageBeyondTheTextIsNotTrusted: a completion count more than the
// bytes of the text that arrived could hold (590 tokens for five " hello"
// chunks, 30 bytes), or tokens claimed for a reply that carried no text,
// is not the OSL, by default or under --use-server-token-count: the
// client's count stands in for it, and the request is a usage
// discrepancy.
func TestUsageBeyondTheTextIsNotTrusted(t *testing.T) {
	for _, tc := range []struct {
		name              string
		words, completion int
		osl               float64
		why               string
	}{
		{"inflated", 5, 590, 5, "completion_tokens 590, more than the 30 byte(s) of generated text that arrived could hold"},
		{"no text", 0, 5, 0, "completion_tokens 5: no generated text arrived"},
	} {
		for _, server := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s server=%v", tc.name, server), func(t *testing.T) {
				p := profile(claiming(t, tc.words, tc.completion))
				p.Concurrency, p.RequestCount = plan.Ptr(1), plan.Ptr(3)
				p.UseServerTokenCount = server
				p.OutputTokensMean = nil // no max_tokens: the text alone bounds the count
				run, err := Run(context.Background(), Options{Profile: p})
				require.NoError(t, err)
				osl, ok := run.Profiling.Get(metrics.TagOSL)
				require.True(t, ok)
				require.NotNil(t, osl.Stats)
				assert.Equal(t, tc.osl, osl.Stats.Max, "the client's count, not the server's claim")
				assert.Equal(t, 3, run.Audit.UsageUntrusted)
				disc, _ := run.Profiling.Get(metrics.TagUsageDiscrepancyCount)
				assert.Equal(t, 3.0, disc.Value)
				for _, r := range run.Records {
					require.NotNil(t, r.Usage)
					assert.Equal(t, tc.why, r.Usage.Untrusted)
				}
			})
		}
	}
}
