package kube_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/aiperf-go/aiperf/runner/kube"
)

// throttlingAPI is an API server that creates and deletes what it is asked
// to, lists no events and no pods, and answers every read of a Job (a
// watch included) 429 with a Retry-After of an hour, as an overloaded API
// server may: client-go sleeps it out unless its context ends first.
type throttlingAPI struct {
	mu        sync.Mutex
	throttled int
	deletes   map[string]string // path → body
}

func (a *throttlingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost:
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		meta, _ := obj["metadata"].(map[string]any)
		meta["uid"] = "uid-" + strings.TrimSuffix(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], "s")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(obj)
	case r.Method == http.MethodPatch:
		name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		_, _ = io.WriteString(w, `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"`+name+`","uid":"uid-job"}}`)
	case r.Method == http.MethodDelete:
		a.mu.Lock()
		a.deletes[r.URL.Path] = string(body)
		a.mu.Unlock()
		_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"Status","status":"Success"}`)
	case strings.HasSuffix(r.URL.Path, "/events"):
		_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"EventList","items":[]}`)
	case strings.HasSuffix(r.URL.Path, "/pods"):
		_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"PodList","items":[]}`)
	default:
		a.mu.Lock()
		a.throttled++
		a.mu.Unlock()
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"TooManyRequests","code":429}`)
	}
}

// Every API call made while a trial's pod has not started is bounded by
// --schedule-timeout, a 429's Retry-After included; the trial's objects
// are then deleted, each by its UID.
func TestScheduleTimeoutHoldsUnderRetryAfter(t *testing.T) {
	api := &throttlingAPI{deletes: map[string]string{}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	require.NoError(t, err)
	e, err := kube.New(kube.Cluster{Client: cs, Namespace: ns},
		// The bound covers creating the objects too: long enough for that
		// beside CPU burners (-race), so that it ends in the throttled watch.
		kube.Config{Image: "x", ScheduleTimeout: 5 * time.Second, Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = launchWithin(t, e, dir) // without the bound: an hour's sleep in the first watch
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its pod could not be seen to start within 5s (--schedule-timeout); the job is deleted")
	assert.Contains(t, err.Error(), "no events were reported")
	api.mu.Lock()
	defer api.mu.Unlock()
	assert.Positive(t, api.throttled)
	var job string
	for path, body := range api.deletes {
		if strings.Contains(path, "/jobs/") {
			job = body
		}
	}
	assert.Contains(t, job, `"uid":"uid-job"`, "deleted on the condition that it is the job created")
	assert.Contains(t, job, `"propagationPolicy":"Background"`)
}
