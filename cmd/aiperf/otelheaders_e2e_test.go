package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/otelexport/otelcoltest"
)

// TestOtelMalformedHeadersRefused: a $OTEL_EXPORTER_OTLP_HEADERS entry the
// SDK would drop (its credential, and the export refused far away) refuses
// a run exporting to a collector, exit 2, before any request, naming the
// variable, the entry and its key but never its value; a run that exports
// nothing to OpenTelemetry does not care.
func TestOtelMalformedHeadersRefused(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	col := otelcoltest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=t1,x-api-key=hc%key-s3cret")
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "5", "--otel-url", strings.TrimSuffix(col.URL, "/v1/metrics"),
		"--artifact-dir", filepath.Join(dir, "out"))...)
	require.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, `aiperf: error: $OTEL_EXPORTER_OTLP_HEADERS: entry 2: the value of "x-api-key" is not URL-encoded`)
	assert.Contains(t, inv.stderr, "nothing was sent")
	assert.NotContains(t, inv.stdout+inv.stderr, "s3cret")
	assert.Zero(t, m.control().InferenceRequests)
	assert.Empty(t, col.Sink.AllMetrics())

	inv = cli(t, dir, quick(m.URL, "--request-count", "5", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
}
