package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/seqdist"
)

// prompts.sequence_distribution, AIPerf's typed buckets (sequence-
// distributions.md, "YAML config"): isl and osl a number or {mean,
// stddev}, relative probabilities, 0 disabling a bucket.
func TestSequenceDistributionBuckets(t *testing.T) {
	f, err := parse(
		"models: [m]",
		"endpoint: {urls: [http://localhost:8000]}",
		"dataset:",
		"  prompts:",
		"    sequence_distribution:",
		"      - {isl: {mean: 300, stddev: 100}, osl: {mean: 250, stddev: 80}, probability: 50}",
		"      - {isl: 4000, osl: 64, probability: 1}",
		"      - {isl: 9, osl: 9, probability: 0}",
	)
	require.NoError(t, err)
	d, err := seqdist.Parse(f.Profile.SequenceDistribution)
	require.NoError(t, err)
	assert.Equal(t, []seqdist.Bucket{{ISL: 300, ISLStddev: 100, OSL: 250, OSLStddev: 80, Weight: 50},
		{ISL: 4000, OSL: 64, Weight: 1}}, d.Buckets)
	require.NoError(t, f.Profile.Check())

	f, err = parse("models: [m]", "endpoint: {urls: [http://localhost:8000]}", "dataset:",
		"  prompts: {sequence_distribution: \"64|10,32|8:70;256,128:30\"}")
	require.NoError(t, err)
	assert.Equal(t, "64|10,32|8:70;256,128:30", f.Profile.SequenceDistribution, "the --seq-dist grammar as a string")
}

func TestSequenceDistributionErrors(t *testing.T) {
	for name, c := range map[string]struct {
		yaml string
		want string
	}{
		"grammar": {`"64,32:70;x"`, `bench.yaml:4: datasets[0].prompts.sequence_distribution: at character 10: expected the ISL of entry 2 (a whole number of tokens), got "x"`},
		"missing osl": {"[{isl: 64, probability: 1}]",
			"bench.yaml:4: datasets[0].prompts.sequence_distribution[0]: osl is required"},
		"zero isl": {"[{isl: 0, osl: 3, probability: 1}]",
			"bench.yaml:4: datasets[0].prompts.sequence_distribution[0].isl: expected a mean of 1 to 16777216 tokens and a stddev of 0 to 16777216"},
		"negative probability": {"[{isl: 5, osl: 3, probability: -1}]",
			"bench.yaml:4: datasets[0].prompts.sequence_distribution[0].probability: must be 0 (disabled) or more, got -1"},
		"all disabled": {"[{isl: 5, osl: 3, probability: 0}]",
			"bench.yaml:4: datasets[0].prompts.sequence_distribution: every bucket has probability 0: at least one must be positive"},
		"first_turn_isl": {"[{isl: 5, osl: 3, probability: 1, first_turn_isl: 100}]",
			"bench.yaml:4: datasets[0].prompts.sequence_distribution[0].first_turn_isl: first_turn_isl: (a bucket's own first-turn ISL) is not supported yet"},
		"lognormal": {"[{isl: {mean: 5, median: 4}, osl: 3, probability: 1}]",
			`bench.yaml:4: datasets[0].prompts.sequence_distribution[0].isl: unknown key "median"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parse("models: [m]", "endpoint: {urls: [http://localhost:8000]}", "dataset:",
				"  prompts: {sequence_distribution: "+c.yaml+"}")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// prompts.cache_bust: {target}, as AIPerf's cache-bust-targets.md writes it.
func TestCacheBustTarget(t *testing.T) {
	f, err := parse("models: [m]", "endpoint: {urls: [http://localhost:8000]}", "datasets:", "  - name: main",
		"    type: synthetic", "    prompts:", "      isl: 512", "      osl: 128", "      cache_bust:",
		"        target: warmup_isolation_first_turn", "    prefix_prompts:", "      shared_system_length: 512")
	require.NoError(t, err)
	assert.Equal(t, "warmup_isolation_first_turn", f.Profile.CacheBust)
	_, err = parse("models: [m]", "endpoint: {urls: [http://localhost:8000]}", "dataset:", "  prompts: {cache_bust: {target: sometimes}}")
	assert.ErrorContains(t, err, `datasets[0].prompts.cache_bust.target: expected none | system_prefix | system_suffix`)
}

// prompts.corpus, as AIPerf's prompt-corpus-selection.md writes it.
func TestPromptCorpus(t *testing.T) {
	f, err := parse("models: [m]", "endpoint: {urls: [http://localhost:8000]}", "datasets:", "  - name: main",
		"    type: synthetic", "    prompts:", "      isl: 128", "      corpus: random")
	require.NoError(t, err)
	assert.Equal(t, "random", f.Profile.PromptCorpus)
}
