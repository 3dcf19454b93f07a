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

// oneAtATime is count requests of prompts 0..count-1 sent one after another
// (concurrency 1: each sent after the previous one's reply ended), each of
// 550 prompt tokens; those in hit report 544 of them cached.
func oneAtATime(count int, hit ...int) []metrics.Record {
	var recs []metrics.Record
	for i := range count {
		cached := 0
		for _, h := range hit {
			if h == i {
				cached = 544
			}
		}
		sent := 300 + 20*int64(i)
		recs = append(recs, metrics.Record{Index: i, Prompt: i, InputTokens: 550, SentNs: sent,
			ResponseNs: metrics.StampsOf(sent + 5), EndNs: sent + 10,
			Usage: &metrics.Usage{PromptTokens: 550, CachedTokens: n(cached)}})
	}
	return recs
}

// TestVerifyResetHitsTheCountersDidNotSee: a first request that nothing else
// in flight could have warmed, served from the prefix cache, is a warm cache
// however cold the counters are: counters that saw no hit did not see that
// request (a replica behind a load balancer that the reset and the scrape
// did not reach), and cannot prove the absence of what they did not see.
func TestVerifyResetHitsTheCountersDidNotSee(t *testing.T) {
	coldEv := servermetrics.Evidence{Verdict: servermetrics.EvidenceCold,
		Detail: "0 of 2200 prompt tokens looked up in the first 0.01 s after the reset were served from the prefix cache"}
	for _, tc := range []struct {
		name        string
		independent bool
		recs        []metrics.Record
		which       string
	}{
		{"independent prompts, one at a time", true, oneAtATime(6, 2, 5),
			"2 of 6 prompts were served from the prefix cache on their first request after the reset"},
		// The second request was sent after the first's reply began: it
		// cannot have warmed the shared prefix for the first.
		{"shared prefixes, the first request alone", false, oneAtATime(3, 0),
			"the run's first request after the reset was served from the prefix cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := firstHits(tc.recs, tc.independent)
			require.Positive(t, f.hits)
			require.Zero(t, f.contested, "nothing in flight could have warmed it")
			c := &cell{p: plan.NewProfile(), run: &result.Run{}}
			a := &c.run.Audit
			a.KVReset, a.KVResetDetail = resetVerdict(f, tc.independent, c.p.ResetHint(), "")
			a.KVResetEvidence = []string{result.EvidenceCachedTokens}
			c.joinServerEvidence([]servermetrics.Evidence{coldEv}, f, tc.independent)
			assert.Equal(t, result.ResetNotCleared, a.KVReset, a.KVResetDetail)
			assert.Equal(t, []string{result.EvidenceCachedTokens}, a.KVResetEvidence, "the counters contradict the verdict")
			assert.Equal(t, []string{"cold: " + coldEv.Detail}, a.ServerResetEvidence)
			assert.Contains(t, a.KVResetDetail, tc.which)
			assert.Contains(t, a.KVResetDetail, "with nothing else in flight that could have warmed")
			assert.Contains(t, a.KVResetDetail, "but the server's prefix-cache counters saw a cold cache ("+coldEv.Detail+")")
			assert.Contains(t, a.KVResetDetail, "the cache was not cleared")
			assert.Contains(t, a.KVResetDetail, "several replicas behind one URL, such as a load balancer")
			assert.NotContains(t, a.KVResetDetail, "ambiguous")
		})
	}
}

// TestVerifyResetReplicaTheResetMissed is the run of a load balancer in
// front of two replicas: requests go to A, A, B, A, A, B at concurrency 1;
// the reset and the /metrics scrape reach A only, and B, never reset, serves
// its two prompts from its prefix cache. A's counters count 4 of the 6
// prompts, enough to be believed, and no hit: the verdict is still not
// cleared, and the warning says what to do.
func TestVerifyResetReplicaTheResetMissed(t *testing.T) {
	var queries atomic.Int64 // replica A's prefix-cache lookups; it never hits
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total 0\n"+
			"# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total %d\n", queries.Load())
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
	records := oneAtATime(6, 2, 5) // B served requests 2 and 5
	queries.Store(4 * 550)         // A looked up the prompts of requests 0, 1, 3 and 4
	now.Store(500)
	col.Mark("profiling", false)
	r := col.Stop()
	require.Equal(t, "profiling", r.Span)

	c := &cell{p: plan.NewProfile(), run: &result.Run{Server: &r}}
	c.verifyReset(records)
	a := &c.run.Audit
	assert.Equal(t, result.ResetNotCleared, a.KVReset, a.KVResetDetail)
	require.Len(t, a.ServerResetEvidence, 1)
	assert.True(t, strings.HasPrefix(a.ServerResetEvidence[0], servermetrics.EvidenceCold+": 0 of 2200 "),
		"A's counters are believed: %s", a.ServerResetEvidence[0])
	require.Len(t, a.Warnings, 1)
	w := a.Warnings[0]
	assert.True(t, strings.HasPrefix(w, "kv cache reset: 2 of 6 prompts were served from the prefix cache on their "+
		"first request after the reset"), w)
	assert.Contains(t, w, "those counters did not see the requests that hit")
	assert.Contains(t, w, "reset every replica, e.g. give each replica's URL with --url, and point --server-metrics at "+
		"each replica's /metrics")
}
