package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestPlanShowsEachPresetsHooks: `aiperf plan`'s hooks column names the
// calls a trial really makes for every --server preset: llama.cpp's slot
// erase, not the default /reset_prefix_cache it never POSTs; an explicit
// path beats the preset; trtllm's refused hooks never reach a plan.
func TestPlanShowsEachPresetsHooks(t *testing.T) {
	cases := []struct {
		server, path string
		profiler     bool
		want         string
	}{
		{"", "", true, "reset /reset_prefix_cache, profiler /start_profile|/stop_profile"},
		{"vllm", "", true, "reset /reset_prefix_cache, profiler /start_profile|/stop_profile"},
		{"sglang", "", true, "reset /flush_cache, profiler /start_profile|/stop_profile"},
		{"llamacpp", "", false, "reset GET /slots + POST /slots/{id}?action=erase"},
		{"llamacpp", "/admin/reset", false, "reset /admin/reset"},
	}
	for _, c := range cases {
		p := plan.NewProfile()
		p.Model, p.URL = []string{"m"}, []string{"http://127.0.0.1:8000"}
		p.Server, p.ResetKVCache, p.ServerProfiler = c.server, true, c.profiler
		if c.path != "" {
			p.ResetKVCachePath = []string{c.path}
		}
		assert.NoError(t, p.Check(), c.server)
		assert.Equal(t, c.want, hooksOf(p), "--server %q", c.server)
	}
	for _, name := range plan.ServerNames {
		assert.Contains(t, []string{"vllm", "sglang", "llamacpp", "trtllm"}, name, "a new preset needs a case above")
	}
	p := plan.NewProfile()
	p.Model, p.URL, p.Server, p.ResetKVCache = []string{"m"}, []string{"http://127.0.0.1:8000"}, "trtllm", true
	assert.ErrorContains(t, p.Check(), "no KV-cache reset route", "trtllm's reset is refused before any plan")
}
