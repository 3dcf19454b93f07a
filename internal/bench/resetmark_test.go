package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// resetServer is the mock behind a handler that calls onReset with each
// reset request before the mock answers it.
func resetServer(t *testing.T, onReset func(r *http.Request)) string {
	t.Helper()
	tok, err := tokenizer.Load(tokenizer.Default)
	require.NoError(t, err)
	srv, err := mock.New(mock.Config{Fast: true, CountTokens: tok.Count})
	require.NoError(t, err)
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/reset_prefix_cache" {
			onReset(r)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestResetWaitsForAnEarlierRunsReset: a trial whose earlier run left its
// reset unanswered (the mark is still there: that run was interrupted)
// sends its own reset, and so its load, only once that reset has run if it
// ever will, says so, and removes the mark once its own was answered.
func TestResetWaitsForAnEarlierRunsReset(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		arrived []time.Time
	)
	url := resetServer(t, func(*http.Request) { mu.Lock(); arrived = append(arrived, time.Now()); mu.Unlock() })
	mark := filepath.Join(t.TempDir(), "reset_pending.json")
	until := time.Now().Add(2 * time.Second)
	b, err := json.Marshal(resetMark{Origins: []string{url}, SentAt: time.Now().Add(-time.Second).UnixNano(), Until: until.UnixNano()})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mark, b, 0o644))

	p := profile(url)
	p.ResetKVCache = true
	var log bytes.Buffer
	run, err := Run(context.Background(), Options{Profile: p, ResetMark: mark, Log: &log})
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, run.Status)
	mu.Lock()
	require.Len(t, arrived, 1)
	assert.False(t, arrived[0].Before(until), "the reset was sent before the earlier one's time was up")
	mu.Unlock()
	assert.Contains(t, log.String(), "note: the KV-cache reset of an earlier run of this trial (sent to "+url)
	assert.Contains(t, log.String(), "waiting")
	var warned bool
	for _, w := range run.Audit.Warnings {
		warned = warned || strings.HasPrefix(w, result.WarnOwnLateReset+"an earlier run of this trial") &&
			strings.HasSuffix(w, "and may have run during this run")
	}
	assert.True(t, warned, "%q", run.Audit.Warnings)
	assert.NoFileExists(t, mark, "its own reset was answered")
}

// TestInterruptedResetLeavesItsMark: a run interrupted while its reset got
// no answer leaves the mark, waiting from the interrupt, for the trial's
// next run.
func TestInterruptedResetLeavesItsMark(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cutAt time.Time
	url := resetServer(t, func(r *http.Request) {
		cutAt = time.Now()
		cancel()
		<-r.Context().Done() // no answer: the client leaves
	})
	mark := filepath.Join(t.TempDir(), "reset_pending.json")
	p := profile(url)
	p.ResetKVCache = true
	_, err := Run(ctx, Options{Profile: p, ResetMark: mark})
	require.ErrorContains(t, err, "interrupted during the KV-cache reset call")
	b, err := os.ReadFile(mark)
	require.NoError(t, err, "the mark stays")
	var m resetMark
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, []string{url}, m.Origins)
	assert.False(t, time.Unix(0, m.Until).Before(cutAt.Add(hooks.LateResetGrace)), "waited for from the interrupt")
	assert.LessOrEqual(t, m.SentAt, cutAt.UnixNano())
}
