package servermetrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// llamaExposition is what llama-server --metrics serves (the families of
// server_task_result_metrics::to_metrics, tools/server/server-task.cpp in
// ggml-org/llama.cpp): counters with and without _total, one of them
// (n_tokens_max) a high-water mark.
func llamaExposition(prompt, maxTokens int) string {
	return fmt.Sprintf("# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n"+
		"# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total %d\n"+
		"# HELP llamacpp:n_tokens_max Largest observed n_tokens.\n"+
		"# TYPE llamacpp:n_tokens_max counter\nllamacpp:n_tokens_max %d\n", prompt, maxTokens)
}

// TestCountersKeepOneNameAndMaximaNoDelta: a counter has one name, AIPerf's
// (without the _total of its samples), in its series (so the store, compare
// and the console) and in every export; a counter that is a maximum (llama.cpp's n_tokens_max) is reduced as a
// gauge, its max the figure, never a delta.
func TestCountersKeepOneNameAndMaximaNoDelta(t *testing.T) {
	srv := newExporter(t, llamaExposition(100, 64))
	var clock int64
	c := collect(t, Options{Endpoints: []Target{{URL: srv.url, Source: SourceServer}}, Now: func() int64 { return clock }})
	clock = 1e9
	c.Mark("profiling", true)
	clock = 2e9
	srv.set(llamaExposition(900, 512))
	c.Mark("profiling", false)
	r := c.Stop()

	prompt := find(t, r, "llamacpp:prompt_tokens", "profiling")
	assert.Equal(t, TypeCounter, prompt.Type)
	assert.Equal(t, 800.0, prompt.Stats["total"])
	most := find(t, r, "llamacpp:n_tokens_max", "profiling")
	assert.Equal(t, TypeGauge, most.Type, "a maximum is no counter to take deltas of")
	assert.Equal(t, 512.0, most.Stats["max"])
	assert.NotContains(t, most.Stats, "total")

	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, &r, "", meta))
	var doc struct{ Metrics map[string]json.RawMessage }
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.Contains(t, doc.Metrics, "llamacpp:prompt_tokens", "the export names the counter as AIPerf's does")
	assert.NotContains(t, doc.Metrics, "llamacpp:prompt_tokens_total")
	b.Reset()
	require.NoError(t, WriteCSV(&b, &r, "", meta))
	assert.Contains(t, b.String(), ",counter,llamacpp:prompt_tokens,tokens,800.0000,")
	assert.NotContains(t, b.String(), "prompt_tokens_total")
	b.Reset()
	require.NoError(t, WriteJSONL(&b, &r, meta))
	assert.Contains(t, b.String(), `"llamacpp:prompt_tokens":[{"value":900}]`)
	assert.NotContains(t, b.String(), "prompt_tokens_total")

	// a result of a version that kept the _total (read back from JSON)
	// exports and heads the console with the same names
	old := Result{Span: "profiling", Endpoints: []Endpoint{{URL: srv.url, Source: SourceServer}}, Series: []Series{
		{Source: SourceServer, Endpoint: srv.url, Metric: "llamacpp:prompt_tokens_total", Type: TypeCounter, Phase: "profiling",
			Stats: map[string]float64{"total": 800}},
		{Source: SourceServer, Endpoint: srv.url, Metric: "llamacpp:tokens_predicted_total", Type: TypeCounter, Phase: "profiling",
			Stats: map[string]float64{"total": 300, "rate": 30}}}}
	rows := Headline(&old)
	require.Len(t, rows, 1)
	assert.Equal(t, Row{Section: SectionServer, Endpoint: srv.url, Name: "Generation throughput", Stat: "rate", Value: 30,
		Unit: "tokens/s", Metric: "llamacpp:tokens_predicted"}, rows[0])
	b.Reset()
	require.NoError(t, WriteJSON(&b, &old, "", meta))
	doc.Metrics = nil
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.Contains(t, doc.Metrics, "llamacpp:prompt_tokens")
	assert.Contains(t, string(doc.Metrics["llamacpp:prompt_tokens"]), `"unit": "tokens"`)
}
