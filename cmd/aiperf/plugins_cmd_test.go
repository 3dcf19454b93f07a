package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPluginsCommand: `aiperf plugins` lists AIPerf's category names with
// the flag that chooses each and its types, within 120 columns; a category
// lists its types, a type is described; an unknown category or type exits
// 2 with the closest names.
func TestPluginsCommand(t *testing.T) {
	dir := t.TempDir()
	all := cli(t, dir, "plugins")
	require.Equal(t, ExitOK, all.code, all.stderr)
	for _, want := range []string{"endpoint", "--endpoint-type", "arrival_pattern", "constant, poisson, gamma",
		"custom_dataset_loader", "search_planner", "bayesian, monotonic_sla, smooth_isotonic", "convergence_criterion"} {
		assert.Contains(t, all.stdout, want)
	}
	for line := range strings.SplitSeq(all.stdout, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 120, line)
	}
	assert.Equal(t, all.stdout, cli(t, dir, "plugins", "--all").stdout)

	eps := cli(t, dir, "plugins", "endpoint")
	require.Equal(t, ExitOK, eps.code, eps.stderr)
	assert.Contains(t, lineContaining(t, eps.stdout, "chat "), "--endpoint-type chat: path /v1/chat/completions, streams")
	assert.Contains(t, lineContaining(t, eps.stdout, "huggingface_generate"), "streaming path /generate_stream")

	one := cli(t, dir, "plugins", "custom_dataset_loader", "mooncake_trace")
	require.Equal(t, ExitOK, one.code, one.stderr)
	assert.Contains(t, one.stdout, "Selected with: aiperf profile --custom-dataset-type mooncake_trace")

	bad := cli(t, dir, "plugins", "endpont")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, `unknown plugin category "endpont" (did you mean "endpoint"?)`)
	bad = cli(t, dir, "plugins", "endpoint", "chatt")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, `endpoint has no type "chatt" (did you mean "chat"?)`)
}

// TestPluginsSelectedByProfileFlags: every type a category lists is chosen
// by a profile flag that exists, and a type read from a flag's choices is
// one the flag accepts: the listing cannot drift from the command line.
func TestPluginsSelectedByProfileFlags(t *testing.T) {
	var cli CLI
	parser, err := kong.New(&cli, parserOptions()...)
	require.NoError(t, err)
	flags := map[string]*kong.Flag{}
	for _, f := range profileFlags(parser.Model) {
		flags["--"+f.Name] = f
		for _, a := range f.Aliases {
			flags["--"+a] = f
		}
	}
	for _, cat := range pluginCategories {
		types := cat.types(parser.Model)
		require.NotEmpty(t, types, cat.name)
		for _, typ := range types {
			flag := strings.Fields(selectedBy(cat, typ))[0]
			f, ok := flags[flag]
			if !assert.True(t, ok, "%s %s: profile has no %s", cat.name, typ, flag) {
				continue
			}
			if f.Enum != "" {
				assert.Contains(t, f.EnumSlice(), typ, "%s accepts %s", flag, typ)
			}
		}
	}
}
