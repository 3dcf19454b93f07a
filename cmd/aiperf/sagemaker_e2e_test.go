package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sageMakerSeen is one request the fake SageMaker front end took.
type sageMakerSeen struct {
	path   string
	header http.Header
	err    error // its signature's check
}

// startSageMaker is the mock's SageMaker Runtime routes behind a front end
// that checks every request's SigV4 signature (service sagemaker, region
// us-west-2), refusing one that does not verify with 403, and records
// each request.
func startSageMaker(t *testing.T) (*mockServer, func() []sageMakerSeen) {
	awsEnv(t, "AKIDSAGEMAKER", "the-sagemaker-secret", "")
	var mu sync.Mutex
	var seen []sageMakerSeen
	m := behindAWS(t, "the-sagemaker-secret", "", "us-west-2", "sagemaker", func(r *http.Request, err error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, sageMakerSeen{path: r.URL.EscapedPath(), header: r.Header.Clone(), err: err})
	})
	return m, func() []sageMakerSeen {
		mu.Lock()
		defer mu.Unlock()
		return append([]sageMakerSeen(nil), seen...)
	}
}

// sageMakerRecord is what a profile_export.jsonl line says of one request.
type sageMakerRecord struct {
	Metadata struct {
		XRequestID string `json:"x_request_id"`
		HTTPStatus int    `json:"http_status"`
	} `json:"metadata"`
	Metrics struct {
		TTFT struct{ Value float64 }   `json:"time_to_first_token"`
		ICL  struct{ Value []float64 } `json:"inter_chunk_latency"`
		OSL  struct{ Value float64 }   `json:"output_sequence_length"`
	} `json:"metrics"`
	Error json.RawMessage `json:"error"`
}

func readSageMakerRecords(t *testing.T, path string) []sageMakerRecord {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []sageMakerRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r sageMakerRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		out = append(out, r)
	}
	require.NoError(t, sc.Err())
	return out
}

// --sagemaker-endpoint-name streams through SageMaker Runtime's
// InvokeEndpointWithResponseStream: each request signed for sagemaker in
// --aws-region (implied), sent to /endpoints/NAME/invocations-response-stream
// with SageMaker's headers, its event-stream reply unframed so that every
// SSE chunk is still timed on its own.
func TestSageMakerStreaming(t *testing.T) {
	m, seen := startSageMaker(t)
	dir := t.TempDir()
	const osl = 6
	inv := cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--sagemaker-endpoint-name", "my-ep", "--aws-region", "us-west-2",
		"--endpoint-type", "chat", "--streaming", "--isl", "20", "--osl", fmt.Sprint(osl), "--extra-inputs", "ignore_eos:true",
		"--request-count", "6", "--concurrency", "2", "--sagemaker-target-variant", "variant-1",
		"--sagemaker-inference-component-name", "ic-1", "--sagemaker-target-model", "model.tar.gz",
		"--no-store", "--ui", "none", "--artifact-dir", filepath.Join(dir, "out"))
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	reqs := seen()
	require.Len(t, reqs, 6, "the six requests, and nothing else (no probe, no hook)")
	ids := map[string]bool{}
	for _, r := range reqs {
		require.NoError(t, r.err)
		assert.Equal(t, "/endpoints/my-ep/invocations-response-stream", r.path)
		assert.Equal(t, r.header.Get("X-Request-Id"), r.header.Get("X-Amzn-SageMaker-Inference-Id"))
		assert.Equal(t, "application/json", r.header.Get("X-Amzn-SageMaker-Accept"))
		assert.Equal(t, "application/json", r.header.Get("Content-Type"))
		assert.Equal(t, "variant-1", r.header.Get("X-Amzn-SageMaker-Target-Variant"))
		assert.Equal(t, "ic-1", r.header.Get("X-Amzn-SageMaker-Inference-Component"))
		assert.Empty(t, r.header.Get("X-Amzn-SageMaker-Target-Model"), "the streaming operation has no TargetModel")
		ids[r.header.Get("X-Request-Id")] = true
	}
	recs := readSageMakerRecords(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, recs, 6)
	for _, r := range recs {
		assert.Empty(t, r.Error)
		assert.Equal(t, 200, r.Metadata.HTTPStatus)
		assert.True(t, ids[r.Metadata.XRequestID], "the record's request id is the Inference-Id sent")
		assert.Positive(t, r.Metrics.TTFT.Value)
		assert.EqualValues(t, osl, r.Metrics.OSL.Value)
		assert.Len(t, r.Metrics.ICL.Value, osl-1, "every token's chunk timed on its own, whatever the event framing cut")
	}
	assert.NotContains(t, inv.stdout+inv.stderr, "the-sagemaker-secret")
}

// Without --streaming, InvokeEndpoint: /invocations, Accept and the
// target model; --url's path overlapping the route is not repeated.
func TestSageMakerNonStreaming(t *testing.T) {
	m, seen := startSageMaker(t)
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL+"/endpoints/my-ep", "--sagemaker-endpoint-name", "my-ep",
		"--aws-region", "us-west-2", "--endpoint-type", "chat", "--isl", "20", "--osl", "4", "--request-count", "3",
		"--sagemaker-target-model", "model-a.tar.gz", "--no-store", "--ui", "none", "--artifact-dir", filepath.Join(dir, "out"))
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	reqs := seen()
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		require.NoError(t, r.err)
		assert.Equal(t, "/endpoints/my-ep/invocations", r.path)
		assert.Equal(t, "application/json", r.header.Get("Accept"))
		assert.Equal(t, "model-a.tar.gz", r.header.Get("X-Amzn-SageMaker-Target-Model"))
		assert.NotEmpty(t, r.header.Get("X-Amzn-SageMaker-Inference-Id"))
	}
	for _, r := range readSageMakerRecords(t, filepath.Join(dir, "out", "profile_export.jsonl")) {
		assert.Empty(t, r.Error)
		assert.EqualValues(t, 4, r.Metrics.OSL.Value)
	}
}

// What the SageMaker transport cannot do is refused before any traffic
// (exit 2), naming the flag.
func TestSageMakerRefusals(t *testing.T) {
	m, seen := startSageMaker(t)
	base := []string{"profile", "-m", "m", "--url", m.URL, "--request-count", "2", "--no-store"}
	sm := []string{"--sagemaker-endpoint-name", "my-ep", "--aws-region", "us-west-2"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--transport", "sagemaker"}, "--transport sagemaker requires --sagemaker-endpoint-name"},
		{append([]string{"--transport", "http"}, sm...), "--transport http cannot invoke a SageMaker endpoint"},
		{[]string{"--sagemaker-endpoint-name", "my-ep"}, "SageMaker endpoints require --aws-region"},
		{[]string{"--sagemaker-target-variant", "v1"}, "--sagemaker-target-variant needs --sagemaker-endpoint-name"},
		{append([]string{"--wait-for-model-timeout", "5"}, sm...), "--wait-for-model-timeout cannot probe a SageMaker endpoint"},
		{append([]string{"--reset-kv-cache"}, sm...), "does not sign the control hooks"},
		{append([]string{"--endpoint-type", "image_edit"}, sm...), "cannot send multipart/form-data bodies"},
		{append([]string{"--sagemaker-endpoint-name", "bad_name!"}, sm[2:]...), "must be a SageMaker endpoint name"},
	} {
		inv := cli(t, t.TempDir(), append(append([]string{}, base...), tc.args...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", tc.args, inv.stderr)
		assert.Contains(t, inv.stderr, tc.want, "%v", tc.args)
	}
	assert.Empty(t, seen(), "nothing was sent")
}
