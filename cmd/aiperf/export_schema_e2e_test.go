package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/report"
)

// exportSchema is the field list of AIPerf's published JSON export schema
// (testdata/aiperf_json_export_schema_1.5.json, which names its source).
type exportSchema struct {
	SchemaVersion      string            `json:"schema_version"`
	TopLevel           map[string]string `json:"top_level"`
	TopLevelOptional   map[string]string `json:"top_level_optional"`
	RunInfo            map[string]string `json:"run_info"`
	InputConfig        map[string]string `json:"input_config"`
	MetricAlways       map[string]string `json:"metric_always"`
	MetricRecord       map[string]string `json:"metric_record"`
	MetricScalar       map[string]string `json:"metric_scalar"`
	MetricScalarAbsent []string          `json:"metric_scalar_absent"`
	RecordMetrics      []string          `json:"record_metrics"`
	ScalarMetrics      []string          `json:"scalar_metrics"`
}

// TestJSONExportMatchesAIPerfSchema runs a real profile against the mock and
// checks its profile_export_aiperf.json against AIPerf's schema field list:
// every required field present, with the right type and nesting.
func TestJSONExportMatchesAIPerfSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "aiperf_json_export_schema_1.5.json"))
	require.NoError(t, err)
	var schema exportSchema
	require.NoError(t, json.Unmarshal(b, &schema))

	// 10 ms per token: a stream takes time after its first token, so each
	// full-response metric has a value (unless the client read every
	// stream whole at once, late: see late below).
	m := startMock(t, mock.Config{TTFT: 1, ITL: 10})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "8", "--warmup-request-count", "2", "--concurrency", "2",
		"--api-key", "sk-schema-secret", "--no-store", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	raw, err := os.ReadFile(filepath.Join(dir, "out", report.JSONFile))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "sk-schema-secret")
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))

	assert.Equal(t, schema.SchemaVersion, doc["schema_version"])
	checkFields(t, "", doc, schema.TopLevel, true)
	checkFields(t, "", doc, schema.TopLevelOptional, false)
	checkFields(t, "run_info.", doc["run_info"].(map[string]any), schema.RunInfo, true)
	checkFields(t, "input_config.", doc["input_config"].(map[string]any), schema.InputConfig, true)
	for _, tag := range schema.RecordMetrics {
		block, ok := doc[tag].(map[string]any)
		if !ok && tag == "full_response_output_token_throughput_per_user" && late(doc) {
			t.Logf("%s: no value, every stream was read whole at once (a busy machine)", tag)
			continue
		}
		if assert.True(t, ok, "record metric %s is an object", tag) {
			checkFields(t, tag+".", block, schema.MetricAlways, true)
			checkFields(t, tag+".", block, schema.MetricRecord, true)
		}
	}
	for _, tag := range schema.ScalarMetrics {
		block, ok := doc[tag].(map[string]any)
		if assert.True(t, ok, "scalar metric %s is an object", tag) {
			checkFields(t, tag+".", block, schema.MetricAlways, true)
			checkFields(t, tag+".", block, schema.MetricScalar, true)
			for _, k := range schema.MetricScalarAbsent {
				assert.NotContains(t, block, k, "%s: a derived or aggregate metric has no %s", tag, k)
			}
		}
	}
	// Every metric block, named or not, follows one of the two shapes.
	for key, v := range doc {
		block, ok := v.(map[string]any)
		if !ok || block["unit"] == nil {
			continue
		}
		checkFields(t, key+".", block, schema.MetricAlways, true)
		if _, record := block["count"]; record {
			checkFields(t, key+".", block, schema.MetricRecord, true)
		} else {
			checkFields(t, key+".", block, schema.MetricScalar, true)
		}
	}
}

// late says whether every stream of doc was read whole at once (the
// client held up): each ended when its first token was read and its
// tokens came together (full_decode_duration and inter_token_latency at
// most 0), so a rate over that duration has no value.
func late(doc map[string]any) bool {
	full, ok := doc["full_decode_duration"].(map[string]any)
	itl, ok2 := doc["inter_token_latency"].(map[string]any)
	return ok && ok2 && full["max"] == 0.0 && itl["max"] == 0.0
}

// checkFields checks that obj has every field of want (when required) with
// the type want names.
func checkFields(t *testing.T, prefix string, obj map[string]any, want map[string]string, required bool) {
	t.Helper()
	for name, typ := range want {
		v, ok := obj[name]
		if !ok {
			if required {
				t.Errorf("%s%s: missing (want %s)", prefix, name, typ)
			}
			continue
		}
		if !hasType(v, typ) {
			t.Errorf("%s%s: want %s, got %T %v", prefix, name, typ, v, v)
		}
	}
}

func hasType(v any, typ string) bool {
	for _, alt := range strings.Split(typ, "|") {
		switch x := v.(type) {
		case nil:
			if alt == "null" {
				return true
			}
		case string:
			if alt == "string" {
				return true
			}
			if alt == "datetime" { // ISO 8601: with a zone, or naive as AIPerf's datetime.fromtimestamp
				for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
					if _, err := time.Parse(layout, x); err == nil {
						return true
					}
				}
			}
		case bool:
			if alt == "bool" {
				return true
			}
		case float64:
			if alt == "number" || alt == "int" && x == math.Trunc(x) {
				return true
			}
		case map[string]any:
			if alt == "object" {
				return true
			}
		case []any:
			if alt == "array" {
				return true
			}
		}
	}
	return false
}
