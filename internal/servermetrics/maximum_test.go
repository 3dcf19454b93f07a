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

// TestCountersKeepOneNameAndMaximaNoDelta: a counter is exported under the
// name the server gave it (with _total), as the store and compare name it;
// a counter that is a maximum (llama.cpp's n_tokens_max) is reduced as a
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

	prompt := find(t, r, "llamacpp:prompt_tokens_total", "profiling")
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
	assert.Contains(t, doc.Metrics, "llamacpp:prompt_tokens_total", "the export names the counter as the store does")
	assert.NotContains(t, doc.Metrics, "llamacpp:prompt_tokens")
}
