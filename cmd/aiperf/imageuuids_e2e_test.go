package main

import (
	"bytes"
	"encoding/base64"
	"image"
	pngpkg "image/png"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// uuidRun runs a single_turn file against a mock, each session's rows in
// order, with the extra flags.
func uuidRun(t *testing.T, inputs string, extra ...string) (*mockServer, invocation, string) {
	t.Helper()
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	var png bytes.Buffer
	require.NoError(t, pngpkg.Encode(&png, image.NewGray(image.Rect(0, 0, 300, 200))))
	writeFile(t, dir, "a.png", png.String())
	writeFile(t, dir, "in.jsonl", inputs)
	args := append([]string{"profile", "-m", "Qwen/Qwen2-VL-2B-Instruct", "--url", m.URL, "--endpoint-type", "chat",
		"--input-file", "in.jsonl", "--custom-dataset-type", "single_turn", "--use-server-token-count",
		"--concurrency", "1", "--ui", "none"}, extra...)
	return m, cli(t, dir, args...), dir
}

// TestUUIDAndStrip: with --uuid-and-strip, a session's second row sends
// its repeated image as the uuid alone: the request is smaller by the
// image's data URI, and the mock, as vLLM, serves the image from its
// multimodal cache: the same prompt tokens, no error. A reference the
// server never received is a failed request, as on vLLM; and image_uuids
// on an endpoint type that cannot carry them are refused before traffic.
func TestUUIDAndStrip(t *testing.T) {
	row := `{"session_id": "s", "text": "describe it", "images": ["a.png"], "image_uuids": ["ua"]}` + "\n"
	m, inv, dir := uuidRun(t, row+row, "--uuid-and-strip", "--request-count", "2")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	exp := onlyExport(t, dir)
	assert.Equal(t, 2.0, metricAvg(t, exp, "request_count"))
	assert.Zero(t, metricAvg(t, exp, "error_request_count"))
	recs := jsonlMetrics(t, onlyArtifact(t, dir, "profile_export.jsonl"))
	require.Len(t, recs, 2)
	isl := recs[0]["input_sequence_length"]
	assert.Greater(t, isl, float64(mock.ImageTokens(300, 200)), "text + the image's tokens")
	assert.Equal(t, isl, recs[1]["input_sequence_length"], "the stripped image counted from the server's cache")
	png := readFile(t, dir+"/a.png")
	saved := recs[0]["request_payload_bytes"] - recs[1]["request_payload_bytes"]
	assert.GreaterOrEqual(t, saved, float64(base64.StdEncoding.EncodedLen(len(png))), "the second request carries no image bytes")
	inputs := readFile(t, onlyArtifact(t, dir, "inputs.json"))
	assert.Contains(t, strings.ReplaceAll(strings.ReplaceAll(inputs, " ", ""), "\n", ""), `"image_url":{"url":""},"uuid":"ua"`)
	assert.Equal(t, 2, m.control().InferenceRequests)

	_, inv, dir = uuidRun(t, row+`{"session_id": "t", "text": "describe it", "image_uuids": ["never-sent"]}`+"\n", "--request-count", "2")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 1.0, metricAvg(t, onlyExport(t, dir), "error_request_count"), "a reference the server does not hold fails")

	m, inv, _ = uuidRun(t, row, "--request-count", "1", "--endpoint-type", "image_retrieval")
	require.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "in.jsonl gives image_uuids (vLLM cache ids), and --endpoint-type image_retrieval cannot send them")
	assert.Zero(t, m.control().InferenceRequests)
	m, inv, _ = uuidRun(t, row, "--request-count", "1", "--endpoint-type", "image_retrieval", "--uuid-and-strip")
	require.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--uuid-and-strip applies to --endpoint-type chat (vLLM's image cache ids ride in chat content parts), not image_retrieval")
	assert.Zero(t, m.control().InferenceRequests)
}
