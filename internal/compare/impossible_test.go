package compare_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/compare"
)

// TestImpossibleServerFiguresAreNotJudged: a server whose /metrics said
// 500% KV-cache usage and -3 running requests, figures `aiperf runs show`
// calls impossible, was judged 'higher (p<0.001)' and 'lower (p<0.001)'
// against a sound one. Its runs' values are left out (n/a, no verdict),
// under the alias and the family's own name, in the default view too, and a
// note says which runs and why; the sound side keeps its values.
func TestImpossibleServerFiguresAreNotJudged(t *testing.T) {
	t.Parallel()
	db := openStore(t, filepath.Join(t.TempDir(), "aiperf.db"))
	saveServerGroup(t, db, setup{name: "sound"}, ttfts(20, 21), []vllm{
		{kv: 0.002, running: 1, queries: 100, ttftS: 0.02}, {kv: 0.0021, running: 1.1, queries: 100, ttftS: 0.021}})
	saveServerGroup(t, db, setup{name: "hostile"}, ttfts(20, 21), []vllm{
		{kv: 5, running: -3, queries: 100, ttftS: 0.02}, {kv: 5.1, running: -3.2, queries: 100, ttftS: 0.021}})

	opts := map[string]compare.Options{
		"asked":   {Keys: keys(t, "server.kv_cache_usage.max,server.running.avg,server.vllm:kv_cache_usage_perc.max,server.vllm:num_requests_running.max")},
		"default": {},
	}
	for name, opt := range opts {
		t.Run(name, func(t *testing.T) {
			rep := groups(t, db, opt, "sound", "hostile")
			for _, k := range []string{"server.kv_cache_usage.max", "server.running.avg"} {
				m := metric(t, rep, k)
				assert.Equal(t, 2, m.Values[0].N, "%s: the sound side keeps its values", k)
				assert.Equal(t, 0, m.Values[1].N, "%s: nothing that cannot be is averaged", k)
				assert.Equal(t, compare.NoData, m.Versus[0].Verdict, k)
			}
			notes := strings.Join(rep.Notes, "\n")
			assert.Regexp(t, `warning: hostile: server\.kv_cache_usage\.max(, [^ ]+)? left out \(n/a\) of 2 of 2 runs \[3 4\]: `+
				`500\.00 % cannot be \(a percentage above 100\)`, notes)
			assert.Contains(t, notes, "warning: hostile: server.running.avg left out (n/a) of 2 of 2 runs [3 4]: "+
				"-3.00 requests cannot be (it is negative)")
			assert.NotContains(t, notes, "warning: sound:")
		})
	}
	rep := groups(t, db, opts["asked"], "sound", "hostile")
	for _, k := range []string{"server.vllm:kv_cache_usage_perc.max", "server.vllm:num_requests_running.max"} {
		m := metric(t, rep, k)
		assert.Equal(t, 2, m.Values[0].N, k)
		assert.Equal(t, compare.NoData, m.Versus[0].Verdict, "%s: a family an alias reads is checked as the alias", k)
	}
	assert.True(t, slices.Contains(rep.Notes, "warning: hostile: server.kv_cache_usage.max, server.vllm:kv_cache_usage_perc.max "+
		"left out (n/a) of 2 of 2 runs [3 4]: 500.00 % cannot be (a percentage above 100): see `aiperf runs show`"),
		"one note for the statistics left out of the same runs for the same reason: %q", rep.Notes)
}
