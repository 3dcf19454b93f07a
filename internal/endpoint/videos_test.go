package endpoint

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestVideoJob: a submitted job is polled to its end; a completed one
// succeeds with the server's timings (and its video read when asked), a
// failed one fails with the job's error, a submit without an id is not a
// job.
func TestVideoJob(t *testing.T) {
	t.Setenv(PollIntervalEnv, "0.1")
	var polls atomic.Int32
	final := "completed"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/videos":
			var body map[string]any
			require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
			if body["prompt"] == "no id" {
				_, _ = w.Write([]byte(`{"status": "queued"}`))
				return
			}
			assert.Equal(t, map[string]any{"prompt": "a lake", "model": "wan", "size": "64x64"}, body)
			_, _ = w.Write([]byte(`{"id": "v1", "status": "queued"}`))
		case "/v1/videos/v1":
			if polls.Add(1) < 3 {
				_, _ = w.Write([]byte(`{"id": "v1", "status": "in_progress"}`))
				return
			}
			_, _ = w.Write([]byte(`{"id": "v1", "status": "` + final + `", "inference_time_s": 1.5, "peak_memory_mb": 900, "error": {"message": "out of memory"}}`))
		case "/v1/videos/v1/content":
			_, _ = w.Write(make([]byte, 1000))
		}
	}))
	defer srv.Close()
	c := New(Options{})
	req := Request{URL: srv.URL + "/v1/videos", EndpointType: plan.EndpointVideoGeneration, Model: "wan", Prompt: "a lake",
		Extra: map[string]any{"size": "64x64"}, DownloadVideo: true}
	res := c.Do(context.Background(), req)
	require.Nil(t, res.Err)
	require.NotNil(t, res.Video)
	assert.Equal(t, 1.5, *res.Video.InferenceS)
	assert.Equal(t, 900.0, *res.Video.PeakMemoryMB)
	assert.Equal(t, int64(1000), res.Video.Downloaded)
	assert.Equal(t, int32(3), polls.Load())

	final = "failed"
	polls.Store(2)
	res = c.Do(context.Background(), req)
	require.NotNil(t, res.Err)
	assert.Contains(t, res.Err.Message, "video job v1 failed")
	assert.Contains(t, res.Err.Message, "out of memory")

	req.Prompt = "no id"
	res = c.Do(context.Background(), req)
	require.NotNil(t, res.Err)
	assert.Contains(t, res.Err.Message, "the job has no id")
}

// TestVideoJobKeepsTheQuery: a submit URL with a query (an api-version, a
// gateway's tenant) polls /v1/videos/{id} and downloads its /content with
// the same query after the path, not the id appended to the query.
func TestVideoJobKeepsTheQuery(t *testing.T) {
	t.Setenv(PollIntervalEnv, "0.1")
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		switch r.URL.Path {
		case "/gw/v1/videos":
			_, _ = w.Write([]byte(`{"id": "v1", "status": "queued"}`))
		case "/gw/v1/videos/v1":
			_, _ = w.Write([]byte(`{"id": "v1", "status": "completed"}`))
		case "/gw/v1/videos/v1/content":
			_, _ = w.Write(make([]byte, 10))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	res := New(Options{}).Do(context.Background(), Request{URL: srv.URL + "/gw/v1/videos?api-version=1",
		EndpointType: plan.EndpointVideoGeneration, Model: "wan", Prompt: "a lake", DownloadVideo: true})
	require.Nil(t, res.Err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"POST /gw/v1/videos?api-version=1", "GET /gw/v1/videos/v1?api-version=1",
		"GET /gw/v1/videos/v1/content?api-version=1"}, seen)
}
