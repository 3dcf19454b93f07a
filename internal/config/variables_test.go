package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const varBody = "benchmark:\n  model: m\n  endpoint: {url: \"http://127.0.0.1:1\", type: chat, extra: {x: %s}}\n" +
	"  phases: {type: concurrency, concurrency: 2, requests: 10}\n"

// doubling is a variables: section of n variables after v0, each the
// previous one twice, as item (a format of the previous one's name).
func doubling(v0, item string, n int) string {
	s := "variables:\n  v0: " + v0 + "\n"
	for i := 1; i <= n; i++ {
		s += fmt.Sprintf("  v%d: %s\n", i, strings.ReplaceAll(item, "PREV", fmt.Sprintf("v%d", i-1)))
	}
	return s
}

// Variables that repeat each other double at each step: forty of them
// would render to terabytes. What rendering builds is bounded, one value
// and in all, and refused at the line that passes the bound, once.
func TestVariablesDoublingBounded(t *testing.T) {
	const tooLong = "its {{ }} expressions render more than 1 MiB of text, the most one value may hold (a config file's size): " +
		"put long text in a file the config names (prompts and datasets go there), or repeat variables fewer times"
	const spent = "rendering {{ }} builds more than 64 MiB of text or 1000000 values in all (a sweep's variations included), " +
		"the most a config may build: refer to long or large variables fewer times, or sweep fewer values"
	refs := func(ref string, n int) string {
		return "[" + strings.Repeat(ref+", ", n-1) + ref + "]"
	}
	tests := []struct {
		name, yaml string
		err        string // the one error: a prefix of it when it ends in ": "
	}{
		{"text: v17 is 2 MiB", doubling(`"xxxxxxxxxxxxxxxx"`, `"{{ PREV }}{{ PREV }}"`, 17) +
			fmt.Sprintf(varBody, `"{{ v17 }}"`),
			"bench.yaml:19: variables.v17: " + tooLong},
		{"text around a 1 MiB value", doubling(`"xxxxxxxxxxxxxxxx"`, `"{{ PREV }}{{ PREV }}"`, 16) +
			fmt.Sprintf(varBody, `"a{{ v16 }}"`),
			"bench.yaml:21: benchmark.endpoint.extra.x: " + tooLong},
		{"lists: v15 holds 131071 values", doubling("[a, b]", `["{{ PREV }}", "{{ PREV }}"]`, 16) +
			fmt.Sprintf(varBody, `"{{ v16 }}"`),
			"bench.yaml:17: variables.v15: holds more than 100000 values once its {{ }} are rendered, " +
				"the most a config file may hold: refer to list and object variables fewer times"},
		{"a 1 MiB value 70 times", doubling(`"xxxxxxxxxxxxxxxx"`, `"{{ PREV }}{{ PREV }}"`, 16) +
			"  w: " + refs(`"{{ v16 }}"`, 70) + "\n" + fmt.Sprintf(varBody, `"{{ v16 }}"`),
			"bench.yaml:19: variables.w["},
		{"a list of 32767 values 40 times", doubling("[a, b]", `["{{ PREV }}", "{{ PREV }}"]`, 13) +
			"  w: " + refs(`"{{ v13 }}"`, 40) + "\n" + fmt.Sprintf(varBody, `"{{ v13 }}"`),
			"bench.yaml:16: variables.w["},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bench.yaml", []byte(tt.yaml))
			require.Error(t, err)
			if !strings.HasSuffix(tt.err, "[") {
				require.EqualError(t, err, tt.err)
				return
			}
			assert.NotContains(t, err.Error(), "\n", "said once")
			assert.True(t, strings.HasPrefix(err.Error(), tt.err), err.Error())
			assert.True(t, strings.HasSuffix(err.Error(), "]: "+spent), err.Error())
		})
	}
}

// A variable in a cycle, or one whose {{ }} failed, is reported once:
// what refers to it is not reported again (as undefined, or as not a
// number or a string).
func TestVariableFailureReportedOnce(t *testing.T) {
	_, err := parse(
		"variables:",
		"  v: '{{ w }}'",
		"  w: '{{ x }}'",
		"  x: '{{ v }}'",
		"  y: '{{ v }}-y'",
		"benchmark: {model: '{{ v }}', phases: {concurrency: 2, requests: 9}}",
	)
	require.Error(t, err)
	assert.Equal(t, strings.Join([]string{
		"bench.yaml:2: variables.v: refers to itself through other variables: give one of them a value",
		"bench.yaml:3: variables.w: refers to itself through other variables: give one of them a value",
		"bench.yaml:4: variables.x: refers to itself through other variables: give one of them a value",
		"bench.yaml:5: variables.y: refers to itself through other variables: give one of them a value",
	}, "\n"), err.Error())

	_, err = parse(
		"variables: {a: '{{ nope }}', b: '{{ a }}-x'}",
		"benchmark: {model: '{{ b }}', phases: {concurrency: '{{ a }}', requests: 9}}",
	)
	require.EqualError(t, err, "bench.yaml:1: variables.a: {{ nope }}: no variable nope under variables: (defined: a, b)")
}

// Variables are rendered once each, in the order they need: a long chain
// declared backwards takes as long as forwards (it took hours, each pass
// over the variables resolving one).
func TestVariableChainBackwards(t *testing.T) {
	const n = 40_000
	var b strings.Builder
	b.WriteString("variables:\n")
	for i := range n - 1 {
		fmt.Fprintf(&b, "  a%d: '{{a%d}}'\n", i, i+1)
	}
	fmt.Fprintf(&b, "  a%d: m%d\nbenchmark: {model: '{{ a0 }}', phases: {concurrency: 2, requests: 9}}\n", n-1, n)
	f, err := Parse("bench.yaml", []byte(b.String()))
	require.NoError(t, err)
	assert.Equal(t, []string{fmt.Sprint("m", n)}, f.Profile.Model)
}

// A range problem in a swept phase field names the swept value's line, in
// its variation, and the body's line in the body.
func TestSweptPhaseFieldLine(t *testing.T) {
	f, err := parse(
		"benchmark:",
		"  model: m",
		"  phases:",
		"    concurrency: 2",
		"    requests: 10",
		"sweep:",
		"  parameters:",
		"    concurrency:",
		"      - 4",
		"      - -3",
	)
	require.NoError(t, err)
	assert.Equal(t, "bench.yaml:4: benchmark.phases[0].concurrency", f.Where(-1, "phases[0].concurrency"))
	assert.Equal(t, "bench.yaml:10: benchmark.phases[0].concurrency", f.Where(1, "phases[0].concurrency"))
	assert.Equal(t, "bench.yaml:5: benchmark.phases[0].requests", f.Where(1, "phases[0].requests"))
}
