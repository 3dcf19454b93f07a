package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// countersRun scrapes a fake vLLM /metrics whose prefix-cache counters
// rise by hits and queries while three 550-token prompts are sent and
// answered after the reset, and verifies the reset as a run does. The
// server reports no cached_tokens, so the counters are the only evidence.
func countersRun(t *testing.T, server string, hits, queries float64) *result.Audit {
	t.Helper()
	var h, q atomic.Value
	h.Store(0.0)
	q.Store(0.0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total %g\n"+
			"# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total %g\n", h.Load(), q.Load())
	}))
	t.Cleanup(srv.Close)
	var now atomic.Int64
	now.Store(10)
	col, err := servermetrics.Start(context.Background(), servermetrics.Options{Interval: time.Hour, Now: now.Load,
		Endpoints: []servermetrics.Target{{URL: srv.URL + "/metrics", Source: servermetrics.SourceServer}}})
	require.NoError(t, err)
	now.Store(100)
	col.Mark(servermetrics.PhaseReset, true)
	now.Store(200)
	col.Mark("profiling", true)
	var records []metrics.Record
	for i := range 3 {
		records = append(records, metrics.Record{Index: i, Prompt: i, SentNs: 300 + int64(i), EndNs: 400 + int64(i),
			InputTokens: 550, Usage: &metrics.Usage{PromptTokens: 550}})
	}
	h.Store(hits)
	q.Store(queries)
	now.Store(500)
	col.Mark("profiling", false)
	r := col.Stop()
	require.Equal(t, "profiling", r.Span)

	p := plan.NewProfile()
	p.Server = server
	c := &cell{p: p, run: &result.Run{Server: &r}}
	c.verifyReset(records)
	return &c.run.Audit
}

// TestResetCountersAreCheckedAgainstWhatWasSent: prefix-cache counters that
// count far fewer prompt tokens than the requests answered in their window
// sent cannot be right, and verify nothing; counters that count them do;
// hits on too few lookups still show a warm cache.
func TestResetCountersAreCheckedAgainstWhatWasSent(t *testing.T) {
	t.Run("too few lookups", func(t *testing.T) {
		a := countersRun(t, "", 0, 3)
		assert.Equal(t, result.ResetUnverifiable, a.KVReset, a.KVResetDetail)
		assert.Empty(t, a.KVResetEvidence)
		assert.Contains(t, a.KVResetDetail, "the server's prefix-cache counters cannot be right: ")
		assert.Contains(t, a.KVResetDetail, "counted 3 prompt tokens looked up (vllm:prefix_cache_hits / vllm:prefix_cache_queries) "+
			"in the first 0.00 s after the reset, fewer than half of the 1650 prompt tokens of the 3 requests that completed in that time")
		require.Len(t, a.ServerResetEvidence, 1)
		assert.True(t, strings.HasPrefix(a.ServerResetEvidence[0], servermetrics.EvidenceNone+": "), a.ServerResetEvidence[0])
		assert.Contains(t, a.ServerResetEvidence[0], "so its counters are no evidence (they counted: 0 of 3 prompt tokens looked up")
	})
	t.Run("too few lookups, warm", func(t *testing.T) {
		// Hits are hits whatever share of the traffic the counters saw (a
		// replica the reset did not reach, behind a load balancer).
		a := countersRun(t, "", 500, 500)
		assert.Equal(t, result.ResetNotCleared, a.KVReset, a.KVResetDetail)
		assert.NotContains(t, a.KVResetDetail, "cannot be right")
	})
	t.Run("lookups of what was sent", func(t *testing.T) {
		a := countersRun(t, "", 0, 1700)
		assert.Equal(t, result.ResetVerified, a.KVReset, a.KVResetDetail)
		assert.Equal(t, []string{result.EvidenceServerCounters}, a.KVResetEvidence)
		assert.Contains(t, a.KVResetDetail, "0 of 1700 prompt tokens looked up")
	})
	t.Run("lookups counted by another tokenizer", func(t *testing.T) {
		a := countersRun(t, "", 0, 900)
		assert.Equal(t, result.ResetVerified, a.KVReset, "more than half of what the client counted: %s", a.KVResetDetail)
	})
}

// TestUnverifiableResetNamesTheServersReport: the hint of a reset that
// cached_tokens cannot check names what --server reports.
func TestUnverifiableResetNamesTheServersReport(t *testing.T) {
	none := firsts{}
	for server, want := range map[string]string{
		"":         "(vLLM: --enable-prompt-tokens-details; SGLang: --enable-cache-report)",
		"vllm":     "(vLLM: --enable-prompt-tokens-details)",
		"sglang":   "(SGLang: --enable-cache-report)",
		"llamacpp": "(llama.cpp: older llama-server builds report the prompt tokens they reused only as timings.cache_n",
	} {
		verdict, detail := resetVerdict(none, true, "a hint", server)
		assert.Equal(t, result.ResetUnverifiable, verdict)
		assert.Contains(t, detail, "the server reports no prompt_tokens_details.cached_tokens "+want, server)
		if server == "llamacpp" {
			assert.NotContains(t, detail, "vLLM")
		}
	}
}
