package servermetrics

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specRows scrapes the first body at the profiling phase's start, each of
// the next between its edges and the last at its end, and returns the
// Server rows named "Spec decode …".
func specRows(t *testing.T, bodies ...string) []Row {
	t.Helper()
	srv := newExporter(t, bodies[0])
	c := collect(t, Options{Endpoints: []Target{{URL: srv.url, Source: SourceServer}}, Warmup: []string{between}})
	c.Mark("profiling", true)
	for _, b := range bodies[1 : len(bodies)-1] {
		srv.set(b)
		scrapeBetween(c)
	}
	srv.set(bodies[len(bodies)-1])
	c.Mark("profiling", false)
	r := c.Stop()
	require.Empty(t, r.Warnings)
	var out []Row
	for _, row := range Headline(&r) {
		if len(row.Name) > 11 && row.Name[:11] == "Spec decode" {
			out = append(out, row)
		}
	}
	return out
}

// TestServerSpecDecodeRows: the server's speculative decoding over the
// profiling span, from vLLM's counters (their increase) or SGLang's gauges.
func TestServerSpecDecodeRows(t *testing.T) {
	vllm := func(accepted, drafted, drafts int) string {
		return fmt.Sprintf("# TYPE vllm:spec_decode_num_accepted_tokens_total counter\nvllm:spec_decode_num_accepted_tokens_total %d\n"+
			"# TYPE vllm:spec_decode_num_draft_tokens_total counter\nvllm:spec_decode_num_draft_tokens_total %d\n"+
			"# TYPE vllm:spec_decode_num_drafts_total counter\nvllm:spec_decode_num_drafts_total %d\n", accepted, drafted, drafts)
	}
	rows := specRows(t, vllm(1000, 4000, 1000), vllm(1180, 4320, 1080)) // +180 of +320 over +80 steps
	require.Len(t, rows, 2)
	assert.Equal(t, "Spec decode acceptance rate", rows[0].Name)
	assert.InDelta(t, 100*180.0/320, rows[0].Value, 1e-9)
	assert.Equal(t, "%", rows[0].Unit)
	assert.Equal(t, "Spec decode acceptance length", rows[1].Name)
	assert.InDelta(t, 1+180.0/80, rows[1].Value, 1e-9)

	sglang := func(rate, length float64) string {
		return fmt.Sprintf("# TYPE sglang:spec_accept_rate gauge\nsglang:spec_accept_rate %g\n"+
			"# TYPE sglang:spec_accept_length gauge\nsglang:spec_accept_length %g\n", rate, length)
	}
	rows = specRows(t, sglang(0.5, 3), sglang(0.6, 3.5), sglang(0.7, 4))
	require.Len(t, rows, 2)
	assert.InDelta(t, 60, rows[0].Value, 1e-9, "the average over time of the span (the scrape between its edges), in %")
	assert.InDelta(t, 3.5, rows[1].Value, 1e-9)
	assert.Empty(t, specRows(t, sglang(0.5, 3), sglang(0.7, 4)), "no scrape between the edges: no average over time")
	assert.Equal(t, "tokens/step", rows[1].Unit)

	assert.Empty(t, specRows(t, "# TYPE x gauge\nx 1\n", "# TYPE x gauge\nx 2\n"), "no speculative decoding")
}
