package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// datasets[].system_prompt and system_prompt_file are AIPerf's
// SystemPromptMixin fields, on synthetic, file and public datasets alike.
func TestSystemPromptKeys(t *testing.T) {
	f, err := parse(
		"benchmark:",
		"  model: m",
		"  dataset:",
		"    type: synthetic",
		"    system_prompt: |",
		"      Be brief.",
	)
	require.NoError(t, err)
	assert.Equal(t, "Be brief.\n", f.Profile.SystemPrompt)

	f, err = parse(
		"benchmark:",
		"  model: m",
		"  dataset:",
		"    type: file",
		"    path: data.jsonl",
		"    systemPromptFile: sys.txt",
	)
	require.NoError(t, err)
	assert.Equal(t, "sys.txt", f.Profile.SystemPromptFile)

	_, err = parse(
		"benchmark:",
		"  model: m",
		"  dataset:",
		"    system_prompt: [a]",
	)
	assert.ErrorContains(t, err, "bench.yaml:4: benchmark.dataset.system_prompt: expected string")
}
