// Package mlflow logs runs to an MLflow tracking server through its
// documented REST API (/api/2.0/mlflow/...: experiments get-by-name and
// create, runs create, update and log-batch; artifacts through the
// server's proxied mlflow-artifacts API), as AIPerf's --mlflow-* options
// do with the Python client: an experiment created or reused, a run (a
// child of --mlflow-parent-run-id, or of a sweep's parent run) that
// receives live.* scalars while the load goes, then the summary metrics
// under AIPerf's key scheme (diagnostics in the system/ namespace),
// parameters, tags and the export files, and mlflow_export.json.
package mlflow

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/redirect"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// Client speaks MLflow's REST API.
type Client struct {
	base   string // the tracking URI without credentials, no trailing slash
	auth   string // the Authorization header ("" for none)
	http   *http.Client
	redact func(string) string
}

// NewClient makes a client of the tracking server at trackingURI. Its
// credentials come from the URI's userinfo, else $MLFLOW_TRACKING_TOKEN
// (Bearer) or $MLFLOW_TRACKING_USERNAME and $MLFLOW_TRACKING_PASSWORD
// (Basic), as MLflow's own client reads them; each request is bounded by
// $MLFLOW_HTTP_REQUEST_TIMEOUT seconds (default 120, MLflow's). redact
// cleans the messages of errors (nil: as is).
func NewClient(trackingURI string, redact func(string) string) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(trackingURI))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, errors.New("the mlflow tracking uri must be an http(s) URL of a tracking server")
	}
	c := &Client{http: &http.Client{Timeout: requestTimeout(), CheckRedirect: redirect.Check}, redact: redact}
	if c.redact == nil {
		c.redact = func(s string) string { return s }
	}
	switch {
	case u.User != nil:
		pw, _ := u.User.Password()
		c.auth = basic(u.User.Username(), pw)
	case os.Getenv("MLFLOW_TRACKING_TOKEN") != "":
		c.auth = "Bearer " + os.Getenv("MLFLOW_TRACKING_TOKEN")
	case os.Getenv("MLFLOW_TRACKING_USERNAME") != "":
		c.auth = basic(os.Getenv("MLFLOW_TRACKING_USERNAME"), os.Getenv("MLFLOW_TRACKING_PASSWORD"))
	}
	u.User = nil
	c.base = strings.TrimRight(u.String(), "/")
	return c, nil
}

// EnvSecrets are the credentials MLflow's environment variables hold, to
// be redacted wherever the run writes: the token, the password and the
// Basic credential sent for the user name and password (the user name
// alone is no secret, as a URL's is not).
func EnvSecrets() []string {
	var out []string
	for _, k := range []string{"MLFLOW_TRACKING_TOKEN", "MLFLOW_TRACKING_PASSWORD"} {
		if v := os.Getenv(k); v != "" {
			out = append(out, v)
		}
	}
	if pw := os.Getenv("MLFLOW_TRACKING_PASSWORD"); pw != "" {
		out = append(out, strings.TrimPrefix(basic(os.Getenv("MLFLOW_TRACKING_USERNAME"), pw), "Basic "))
	}
	return out
}

func basic(user, pw string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
}

func requestTimeout() time.Duration {
	if s, err := strconv.ParseFloat(os.Getenv("MLFLOW_HTTP_REQUEST_TIMEOUT"), 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return 120 * time.Second
}

// APIError is an error answer of the server: its HTTP status and MLflow's
// error_code (RESOURCE_DOES_NOT_EXIST, RESOURCE_ALREADY_EXISTS, ...).
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	msg := termsafe.Text(e.Message) // the server's words, on the error's one line
	if e.Code != "" {
		return fmt.Sprintf("%d %s: %s", e.Status, termsafe.Text(e.Code), msg)
	}
	return fmt.Sprintf("%d: %s", e.Status, msg)
}

// NoAnswerError is a call the tracking server did not answer: refused,
// reset, or still unanswered at the request timeout (not one its caller
// cancelled). Its message is redacted.
type NoAnswerError struct{ msg string }

func (e *NoAnswerError) Error() string { return e.msg }

// NoAnswer reports whether err is a call the server did not answer.
func NoAnswer(err error) bool {
	var na *NoAnswerError
	return errors.As(err, &na)
}

// IsCode reports whether err is an APIError with that error_code.
func IsCode(err error, code string) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == code
}

// maxAnswer bounds what is read of an answer, maxMessage (characters) what
// is kept of an error answer's message.
const (
	maxAnswer  = 4 << 20
	maxMessage = 512
)

// do sends a JSON request (in nil: none) and decodes the answer into out
// (nil: ignored).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s: %w", path, err)
		}
		body = bytes.NewReader(b)
	}
	return c.send(ctx, method, c.base+"/api/2.0/mlflow/"+path, "application/json", body, out)
}

func (c *Client) send(ctx context.Context, method, u, ctype string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("mlflow %s %s: %w", method, c.path(u), err)
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		msg := fmt.Sprintf("mlflow %s %s: %s", method, c.path(u), c.redact(err.Error()))
		if ctx.Err() != nil { // cut by the caller, not left unanswered
			return errors.New(msg)
		}
		return &NoAnswerError{msg}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("mlflow %s %s: read the answer: %w", method, c.path(u), err)
	}
	if resp.StatusCode/100 != 2 {
		ae := &APIError{Status: resp.StatusCode}
		var e struct {
			Code    string `json:"error_code"`
			Message string `json:"message"`
		}
		// The message is redacted whole, then bounded: a server's echo of a
		// long value (a refused parameter) is never printed whole.
		if json.Unmarshal(b, &e) == nil && e.Code != "" {
			ae.Code, ae.Message = e.Code, Preview(c.redact(e.Message), maxMessage)
		} else {
			ae.Message = Preview(c.redact(strings.TrimSpace(string(b))), maxMessage)
		}
		return fmt.Errorf("mlflow %s %s: %w", method, c.path(u), ae)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("mlflow %s %s: the answer is not MLflow's JSON: %w", method, c.path(u), err)
		}
	}
	return nil
}

// path is u without the server, for messages.
func (c *Client) path(u string) string { return strings.TrimPrefix(u, c.base) }

// ExperimentID returns the id of the named experiment, creating it when
// it does not exist.
func (c *Client) ExperimentID(ctx context.Context, name string) (string, error) {
	var got struct {
		Experiment struct {
			ID string `json:"experiment_id"`
		} `json:"experiment"`
	}
	err := c.do(ctx, http.MethodGet, "experiments/get-by-name?experiment_name="+url.QueryEscape(name), nil, &got)
	if err == nil {
		return got.Experiment.ID, nil
	}
	if !IsCode(err, "RESOURCE_DOES_NOT_EXIST") {
		return "", err
	}
	var made struct {
		ID string `json:"experiment_id"`
	}
	err = c.do(ctx, http.MethodPost, "experiments/create", map[string]any{"name": name}, &made)
	if IsCode(err, "RESOURCE_ALREADY_EXISTS") { // created meanwhile
		return c.ExperimentID(ctx, name)
	}
	return made.ID, err
}

// RunInfo is the part of MLflow's RunInfo this package uses.
type RunInfo struct {
	RunID        string `json:"run_id"`
	ExperimentID string `json:"experiment_id"`
	RunName      string `json:"run_name"`
	Status       string `json:"status"`
	ArtifactURI  string `json:"artifact_uri"`
}

// KV is a param or tag.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Metric is one logged metric value.
type Metric struct {
	Key       string  `json:"key"`
	Value     float64 `json:"value"`
	Timestamp int64   `json:"timestamp"` // ms since the epoch
	Step      int64   `json:"step"`
}

// CreateRun creates a run in the experiment.
func (c *Client) CreateRun(ctx context.Context, experimentID, name string, tags []KV, start time.Time) (RunInfo, error) {
	var got struct {
		Run struct {
			Info RunInfo `json:"info"`
		} `json:"run"`
	}
	err := c.do(ctx, http.MethodPost, "runs/create", map[string]any{"experiment_id": experimentID, "run_name": name,
		"start_time": start.UnixMilli(), "tags": nonNil(tags)}, &got)
	if err == nil && got.Run.Info.RunID == "" {
		err = errors.New("mlflow runs/create: the answer has no run_id")
	}
	return got.Run.Info, err
}

// UpdateRun sets a run's status (FINISHED, FAILED, KILLED) and end time.
func (c *Client) UpdateRun(ctx context.Context, runID, status string, end time.Time) error {
	return c.do(ctx, http.MethodPost, "runs/update", map[string]any{"run_id": runID, "status": status,
		"end_time": end.UnixMilli()}, nil)
}

// The limits of one log-batch request (MLflow's).
const (
	batchMetrics = 1000
	batchParams  = 100
	batchTags    = 100
	batchItems   = 1000
)

// LogBatch logs metrics, params and tags, in as many requests as MLflow's
// limits need.
func (c *Client) LogBatch(ctx context.Context, runID string, metrics []Metric, params, tags []KV) error {
	for len(metrics)+len(params)+len(tags) > 0 {
		np := min(len(params), batchParams)
		nt := min(len(tags), batchTags)
		nm := min(len(metrics), batchMetrics, batchItems-np-nt)
		err := c.do(ctx, http.MethodPost, "runs/log-batch", map[string]any{"run_id": runID,
			"metrics": nonNil(metrics[:nm]), "params": nonNil(params[:np]), "tags": nonNil(tags[:nt])}, nil)
		if err != nil {
			return err
		}
		metrics, params, tags = metrics[nm:], params[np:], tags[nt:]
	}
	return nil
}

// ErrNotProxied says the run's artifacts are not stored through the
// tracking server, which is all this client uploads through.
var ErrNotProxied = errors.New("the run's artifact store is not served by the tracking server " +
	"(start mlflow server with --serve-artifacts, the default since MLflow 2.0)")

// UploadArtifact uploads a file to the run's artifacts at rel (a slash
// path) through the proxied artifact API.
func (c *Client) UploadArtifact(ctx context.Context, artifactURI, rel string, body io.Reader) error {
	root, ok := strings.CutPrefix(artifactURI, "mlflow-artifacts:")
	if !ok {
		return fmt.Errorf("upload %s: %w (its artifact uri is %s)", rel, ErrNotProxied, c.redact(artifactURI))
	}
	if strings.HasPrefix(root, "//") { // mlflow-artifacts://host:port/path
		root = root[2:]
		if i := strings.Index(root, "/"); i >= 0 {
			root = root[i:]
		}
	}
	p := strings.Trim(root, "/") + "/" + strings.TrimLeft(rel, "/")
	u := c.base + "/api/2.0/mlflow-artifacts/artifacts/" + (&url.URL{Path: p}).EscapedPath()
	return c.send(ctx, http.MethodPut, u, "application/octet-stream", body, nil)
}

// GetRun returns a run's info and data (for checks).
func (c *Client) GetRun(ctx context.Context, runID string) (RunInfo, map[string]float64, map[string]string, map[string]string, error) {
	var got struct {
		Run struct {
			Info RunInfo `json:"info"`
			Data struct {
				Metrics []Metric `json:"metrics"`
				Params  []KV     `json:"params"`
				Tags    []KV     `json:"tags"`
			} `json:"data"`
		} `json:"run"`
	}
	if err := c.do(ctx, http.MethodGet, "runs/get?run_id="+url.QueryEscape(runID), nil, &got); err != nil {
		return RunInfo{}, nil, nil, nil, err
	}
	m, p, t := map[string]float64{}, map[string]string{}, map[string]string{}
	for _, x := range got.Run.Data.Metrics {
		m[x.Key] = x.Value
	}
	for _, x := range got.Run.Data.Params {
		p[x.Key] = x.Value
	}
	for _, x := range got.Run.Data.Tags {
		t[x.Key] = x.Value
	}
	return got.Run.Info, m, p, t, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
