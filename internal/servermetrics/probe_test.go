package servermetrics

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestServingDCGMKeepsOnlyExporters: of the default exporters looked for,
// only those answering with DCGM metrics are kept; an inference server's
// /metrics, a 404, a closed port and a non-URL are left out silently.
func TestServingDCGMKeepsOnlyExporters(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true, GPUMetrics: true, GPUs: 1})
	missing := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(missing.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String() + "/metrics"
	require.NoError(t, l.Close())

	got := ServingDCGM(context.Background(), []string{m + "/metrics", closed, missing.URL + "/metrics",
		m + "/dcgm/metrics", "http://%zz/metrics"})
	assert.Equal(t, []string{m + "/dcgm/metrics"}, got)
}

// TestAnonymousTargetsGetNoHeaders: the server's credentials go with every
// scrape on its origin but an anonymous one's (a default DCGM exporter).
func TestAnonymousTargetsGetNoHeaders(t *testing.T) {
	var namedWith, namedWithout, defaultWith, defaultWithout atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization") != ""
		switch {
		case r.URL.Path == "/named" && auth:
			namedWith.Add(1)
		case r.URL.Path == "/named":
			namedWithout.Add(1)
		case auth:
			defaultWith.Add(1)
		default:
			defaultWithout.Add(1)
		}
		w.Write([]byte("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 1\n"))
	}))
	t.Cleanup(srv.Close)
	col, err := Start(context.Background(), Options{
		Endpoints: []Target{{URL: srv.URL + "/named", Source: SourceGPU}, {URL: srv.URL + "/default", Source: SourceGPU, Anonymous: true}},
		Headers:   http.Header{"Authorization": {"Bearer sk-secret"}},
		Origins:   []string{srv.URL},
	})
	require.NoError(t, err)
	col.Stop()
	assert.Positive(t, namedWith.Load(), "the named exporter gets the headers")
	assert.Zero(t, namedWithout.Load())
	assert.Positive(t, defaultWithout.Load(), "the default one is scraped")
	assert.Zero(t, defaultWith.Load(), "without them")
}
