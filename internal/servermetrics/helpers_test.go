package servermetrics

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestMain turns the slow-parse warning off: under -race on a loaded
// machine any parse may take 20 ms, and most tests assert no warning.
// TestSlowParseWarnsOnce turns it back on.
func TestMain(m *testing.M) {
	slowParse = time.Hour
	os.Exit(m.Run())
}

// startMock serves a mock built from cfg on a random loopback port.
func startMock(t testing.TB, cfg mock.Config) string {
	t.Helper()
	s, err := mock.New(cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

// usage is a reply's usage.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	Details          *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// chat sends one non-streaming chat request and returns its usage.
func chat(t testing.TB, base, prompt string, maxTokens int) usage {
	t.Helper()
	body, err := json.Marshal(map[string]any{"model": "m", "max_tokens": maxTokens,
		"messages": []map[string]any{{"role": "user", "content": prompt}}})
	require.NoError(t, err)
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var reply struct{ Usage usage }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&reply))
	return reply.Usage
}

// collect starts a collector on targets with a long interval (only Start's
// and the marks' scrapes) unless o says otherwise.
func collect(t testing.TB, o Options) *Collector {
	t.Helper()
	if o.Interval == 0 {
		o.Interval = time.Hour
	}
	c, err := Start(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { c.Stop() })
	return c
}

// server is a metrics target on the mock.
func server(base string) Target { return Target{URL: base + "/metrics", Source: SourceServer} }

// find returns the series of metric in phase with labels matching every
// given name=value pair.
func find(t testing.TB, r Result, metric, phase string, labels ...string) Series {
	t.Helper()
	var found []Series
	for _, s := range r.Series {
		if s.Metric != metric || s.Phase != phase {
			continue
		}
		ok := true
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			ok = ok && s.Labels[k] == v
		}
		if ok {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "%s in %s %v", metric, phase, labels)
	return found[0]
}

// words returns a prompt of n distinct words starting at word from.
func words(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("w")
		b.WriteString(strings.Repeat("x", (from+i)%7))
		b.WriteString(string(rune('a' + (from+i)%26)))
	}
	return b.String()
}
