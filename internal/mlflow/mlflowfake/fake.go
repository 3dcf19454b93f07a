// Package mlflowfake is a FAKE MLflow tracking server for tests: no MLflow
// server can run on these machines, so this one answers the REST calls
// package mlflow makes, as MLflow's REST API reference describes them
// (/api/2.0/mlflow/experiments/get-by-name and create, runs/create,
// runs/update, runs/get, runs/log-batch with its limits and immutable
// params, and the proxied /api/2.0/mlflow-artifacts/artifacts PUT), with
// MLflow's error shape ({"error_code", "message"}) and its length limits
// (a param value 6000 characters, a tag value 8000, a key 250, a run name
// 250), and records every call.
// It is not MLflow: tests that need the real server set
// MLFLOW_TRACKING_URI.
package mlflowfake

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Call is one request the fake answered.
type Call struct {
	Method, Path string
	Body         map[string]any // the JSON body (nil for an artifact)
	Status       int
}

// Run is a run as the fake holds it.
type Run struct {
	ID, Experiment, Name, Status string
	Parent                       string // the mlflow.parentRunId tag
	Params, Tags                 map[string]string
	Metrics                      map[string][]float64 // every value logged, in order
	Artifacts                    map[string][]byte    // by path under the run's artifact root
}

// Server is the fake.
type Server struct {
	*httptest.Server
	mu          sync.Mutex
	calls       []Call
	experiments map[string]string // name → id
	runs        map[string]*Run
	order       []string // run ids in creation order
	// Auth, when set, is the Authorization header every call must carry.
	Auth string
	// Quiet, when set, closes every call's connection unanswered (a server
	// gone away mid-run); Unanswered counts those calls.
	Quiet      atomic.Bool
	Unanswered atomic.Int64
	// Hang, when set, holds every call unanswered (counted in Unanswered)
	// until its client gives up or Release is called, which closes its
	// connection unanswered (a server gone quiet, its connections open).
	Hang atomic.Bool
	// HangPath, when set (a string), holds as Hang does the calls whose
	// path ends with it only (runs/update: a server that never sets a
	// run's status).
	HangPath atomic.Value
	hanging  atomic.Int64
	relMu    sync.Mutex
	release  chan struct{}
}

// Start starts the fake on a loopback port, closed at cleanup.
func Start(t testing.TB) *Server {
	s := &Server{experiments: map[string]string{"Default": "0"}, runs: map[string]*Run{}, release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	t.Cleanup(s.Release) // first: Close waits for the calls held
	return s
}

// Hanging is how many calls Hang holds now.
func (s *Server) Hanging() int64 { return s.hanging.Load() }

// Release ends the calls Hang holds, closing their connections unanswered.
func (s *Server) Release() {
	s.relMu.Lock()
	defer s.relMu.Unlock()
	close(s.release)
	s.release = make(chan struct{})
}

func (s *Server) hang(r *http.Request) {
	s.Unanswered.Add(1)
	_, _ = io.Copy(io.Discard, r.Body) // the server sees the client hang up only once the body is read
	s.relMu.Lock()
	rel := s.release
	s.relMu.Unlock()
	s.hanging.Add(1)
	defer s.hanging.Add(-1)
	select {
	case <-r.Context().Done():
	case <-rel:
	}
}

// Calls returns the calls so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Runs returns the runs in creation order (copies, their maps too: a
// request still being served, such as one its client gave up on and sent
// again, writes the fake's own).
func (s *Server) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Run, 0, len(s.order))
	for _, id := range s.order {
		r := *s.runs[id]
		r.Params, r.Tags, r.Metrics, r.Artifacts = maps.Clone(r.Params), maps.Clone(r.Tags), maps.Clone(r.Metrics), maps.Clone(r.Artifacts)
		out = append(out, r)
	}
	return out
}

// Experiments returns the experiments by name.
func (s *Server) Experiments() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, v := range s.experiments {
		out[k] = v
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if p, _ := s.HangPath.Load().(string); s.Hang.Load() || (p != "" && strings.HasSuffix(r.URL.Path, p)) {
		s.hang(r)
		panic(http.ErrAbortHandler)
	}
	if s.Quiet.Load() {
		s.Unanswered.Add(1)
		panic(http.ErrAbortHandler) // the connection closes without an answer
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	call := Call{Method: r.Method, Path: r.URL.Path}
	status, answer := s.route(r, &call)
	call.Status = status
	s.calls = append(s.calls, call)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
}

func apiErr(status int, code, msg string) (int, any) {
	return status, map[string]string{"error_code": code, "message": msg}
}

func (s *Server) route(r *http.Request, call *Call) (int, any) {
	if s.Auth != "" && r.Header.Get("Authorization") != s.Auth {
		return apiErr(401, "UNAUTHENTICATED", "missing or wrong credentials")
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/api/2.0/mlflow-artifacts/artifacts/"); ok && r.Method == http.MethodPut {
		return s.putArtifact(rest, r.Body)
	}
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20+1)).Decode(&call.Body); err != nil {
			return apiErr(400, "MALFORMED_REQUEST", "body is not JSON: "+err.Error())
		}
	}
	b := call.Body
	switch r.Method + " " + strings.TrimPrefix(r.URL.Path, "/api/2.0/mlflow/") {
	case "GET experiments/get-by-name":
		name := r.URL.Query().Get("experiment_name")
		id, ok := s.experiments[name]
		if !ok {
			return apiErr(404, "RESOURCE_DOES_NOT_EXIST", fmt.Sprintf("Could not find experiment with name '%s'", name))
		}
		return 200, map[string]any{"experiment": map[string]any{"experiment_id": id, "name": name,
			"lifecycle_stage": "active", "artifact_location": "mlflow-artifacts:/" + id}}
	case "POST experiments/create":
		name, _ := b["name"].(string)
		if name == "" {
			return apiErr(400, "INVALID_PARAMETER_VALUE", "Missing value for required parameter 'name'")
		}
		if _, ok := s.experiments[name]; ok {
			return apiErr(400, "RESOURCE_ALREADY_EXISTS", fmt.Sprintf("Experiment '%s' already exists.", name))
		}
		id := strconv.Itoa(len(s.experiments) + 100)
		s.experiments[name] = id
		return 200, map[string]any{"experiment_id": id}
	case "POST runs/create":
		return s.createRun(b)
	case "POST runs/update":
		run, ok := s.runs[str(b["run_id"])]
		if !ok {
			return apiErr(404, "RESOURCE_DOES_NOT_EXIST", "Run '"+str(b["run_id"])+"' not found")
		}
		if st := str(b["status"]); st != "" {
			run.Status = st
		}
		return 200, map[string]any{"run_info": s.info(run)}
	case "GET runs/get":
		run, ok := s.runs[r.URL.Query().Get("run_id")]
		if !ok {
			return apiErr(404, "RESOURCE_DOES_NOT_EXIST", "Run '"+r.URL.Query().Get("run_id")+"' not found")
		}
		return 200, map[string]any{"run": map[string]any{"info": s.info(run), "data": data(run)}}
	case "POST runs/log-batch":
		return s.logBatch(b)
	}
	return apiErr(404, "ENDPOINT_NOT_FOUND", r.Method+" "+r.URL.Path+" is not an endpoint of this fake")
}

func (s *Server) createRun(b map[string]any) (int, any) {
	exp := str(b["experiment_id"])
	found := false
	for _, id := range s.experiments {
		found = found || id == exp
	}
	if !found {
		return apiErr(404, "RESOURCE_DOES_NOT_EXIST", "No Experiment with id="+exp+" exists")
	}
	if n := len([]rune(str(b["run_name"]))); n > maxRunName {
		return apiErr(400, "INVALID_PARAMETER_VALUE", fmt.Sprintf("Run name had length %d, which exceeded length limit of %d", n, maxRunName))
	}
	for _, t := range list(b["tags"]) {
		if status, answer, bad := overLimit("Tag", t, maxTagValue); bad {
			return status, answer
		}
	}
	id := fmt.Sprintf("%032x", len(s.order)+1)
	run := &Run{ID: id, Experiment: exp, Name: str(b["run_name"]), Status: "RUNNING", Params: map[string]string{},
		Tags: map[string]string{}, Metrics: map[string][]float64{}, Artifacts: map[string][]byte{}}
	for _, t := range list(b["tags"]) {
		run.Tags[str(t["key"])] = str(t["value"])
	}
	run.Parent = run.Tags["mlflow.parentRunId"]
	s.runs[id] = run
	s.order = append(s.order, id)
	return 200, map[string]any{"run": map[string]any{"info": s.info(run), "data": data(run)}}
}

func (s *Server) logBatch(b map[string]any) (int, any) {
	run, ok := s.runs[str(b["run_id"])]
	if !ok {
		return apiErr(404, "RESOURCE_DOES_NOT_EXIST", "Run '"+str(b["run_id"])+"' not found")
	}
	ms, ps, ts := list(b["metrics"]), list(b["params"]), list(b["tags"])
	switch {
	case len(ms) > 1000:
		return apiErr(400, "INVALID_PARAMETER_VALUE", fmt.Sprintf("A batch logging request can contain at most 1000 metrics. Got %d metrics.", len(ms)))
	case len(ps) > 100:
		return apiErr(400, "INVALID_PARAMETER_VALUE", fmt.Sprintf("A batch logging request can contain at most 100 params. Got %d params.", len(ps)))
	case len(ts) > 100:
		return apiErr(400, "INVALID_PARAMETER_VALUE", fmt.Sprintf("A batch logging request can contain at most 100 tags. Got %d tags.", len(ts)))
	case len(ms)+len(ps)+len(ts) > 1000:
		return apiErr(400, "INVALID_PARAMETER_VALUE", "A batch logging request can contain at most 1000 items in total.")
	}
	for _, p := range ps {
		if status, answer, bad := overLimit("Param", p, maxParamValue); bad {
			return status, answer
		}
	}
	for _, t := range ts {
		if status, answer, bad := overLimit("Tag", t, maxTagValue); bad {
			return status, answer
		}
	}
	for _, p := range ps {
		k, v := str(p["key"]), str(p["value"])
		if old, ok := run.Params[k]; ok && old != v {
			return apiErr(400, "INVALID_PARAMETER_VALUE", fmt.Sprintf("Changing param values is not allowed. Param with key='%s' was already logged with value='%s' for run ID='%s'. Attempted logging new value '%s'.", k, old, run.ID, v))
		}
		run.Params[k] = v
	}
	for _, m := range ms {
		v, ok := m["value"].(float64)
		if _, ts := m["timestamp"].(float64); !ok || !ts || str(m["key"]) == "" {
			return apiErr(400, "INVALID_PARAMETER_VALUE", "a metric needs a key, a numeric value and a timestamp")
		}
		run.Metrics[str(m["key"])] = append(run.Metrics[str(m["key"])], v)
	}
	for _, t := range ts {
		run.Tags[str(t["key"])] = str(t["value"])
	}
	return 200, map[string]any{}
}

// MLflow's length limits, in characters.
const (
	maxParamValue = 6000
	maxTagValue   = 8000
	maxKey        = 250
	maxRunName    = 250
)

// overLimit is MLflow's refusal of a param or tag over its limits (the
// whole request fails), its message quoting the value's start as MLflow's
// does.
func overLimit(what string, kv map[string]any, limit int) (int, any, bool) {
	k, v := []rune(str(kv["key"])), []rune(str(kv["value"]))
	if len(k) > maxKey {
		st, a := apiErr(400, "INVALID_PARAMETER_VALUE", fmt.Sprintf("%s key '%s' had length %d, which exceeded length limit of %d", what, string(k), len(k), maxKey))
		return st, a, true
	}
	if len(v) > limit {
		st, a := apiErr(400, "INVALID_PARAMETER_VALUE", fmt.Sprintf("%s value '%s' had length %d, which exceeded length limit of %d", what, string(v), len(v), limit))
		return st, a, true
	}
	return 0, nil, false
}

func (s *Server) putArtifact(rest string, body io.Reader) (int, any) {
	// <experiment>/<run>/artifacts/<path>
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 4 || parts[2] != "artifacts" {
		return apiErr(400, "INVALID_PARAMETER_VALUE", "artifact path "+rest+" is not under a run's artifact root")
	}
	run, ok := s.runs[parts[1]]
	if !ok || run.Experiment != parts[0] {
		return apiErr(404, "RESOURCE_DOES_NOT_EXIST", "no run at "+rest)
	}
	b, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		return apiErr(400, "MALFORMED_REQUEST", err.Error())
	}
	run.Artifacts[parts[3]] = b
	return 200, map[string]any{}
}

func (s *Server) info(r *Run) map[string]any {
	return map[string]any{"run_id": r.ID, "run_uuid": r.ID, "run_name": r.Name, "experiment_id": r.Experiment,
		"status": r.Status, "lifecycle_stage": "active",
		"artifact_uri": "mlflow-artifacts:/" + r.Experiment + "/" + r.ID + "/artifacts"}
}

func data(r *Run) map[string]any {
	var ms, ps, ts []map[string]any
	for k, v := range r.Metrics {
		ms = append(ms, map[string]any{"key": k, "value": v[len(v)-1], "timestamp": 0, "step": 0})
	}
	for k, v := range r.Params {
		ps = append(ps, map[string]any{"key": k, "value": v})
	}
	for k, v := range r.Tags {
		ts = append(ts, map[string]any{"key": k, "value": v})
	}
	return map[string]any{"metrics": ms, "params": ps, "tags": ts}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func list(v any) []map[string]any {
	raw, _ := v.([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, x := range raw {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
