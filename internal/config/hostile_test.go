package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// A sweep whose values carry a secret is refused at the value, as the
// Starlark path refuses it, and the secret is not shown: it would name
// cells' directories, exports and the store.
func TestSweptSecretsRefused(t *testing.T) {
	const body = `benchmark: {model: m, endpoint: {url: "http://127.0.0.1:1"}, phases: {requests: 2}}`
	tests := []struct {
		name string
		yaml []string
		at   string // FILE:LINE: PATH of the refusal
	}{
		{"api key", []string{
			"sweep: {type: grid, parameters: {endpoint.api_key: [sk-SWEEPSEC1, sk-SWEEPSEC2]}}", body,
		}, "bench.yaml:1: sweep.parameters.endpoint.api_key"},
		{"api key in camelCase, zip, with multi_run", []string{
			body,
			"sweep:",
			"  type: zip",
			"  parameters:",
			"    concurrency: [1, 2]",
			"    endpoint.apiKey:",
			"      - sk-SWEEPSEC1",
			"      - sk-SWEEPSEC2",
			"multi_run: {num_runs: 2}",
		}, "bench.yaml:7: sweep.parameters.endpoint.apiKey"},
		{"secret header", []string{
			"sweep: {parameters: {endpoint.headers.Authorization: [Bearer sk-SWEEPSEC1, Bearer sk-SWEEPSEC2]}}", body,
		}, "bench.yaml:1: sweep.parameters.endpoint.headers.Authorization"},
		{"secret headers as a list", []string{
			`sweep: {parameters: {endpoint.headers: [["X-Api-Key:sk-SWEEPSEC1"], ["X-Api-Key:sk-SWEEPSEC2"]]}}`, body,
		}, "bench.yaml:1: sweep.parameters.endpoint.headers"},
		{"URL password", []string{
			`sweep: {parameters: {endpoint.url: ["http://u:sk-SWEEPSEC1@h:1", "http://u:sk-SWEEPSEC2@h:1"]}}`, body,
		}, "bench.yaml:1: sweep.parameters.endpoint.url"},
		{"secret query parameter", []string{
			`sweep: {parameters: {endpoint.url: ["http://h:1/?sig=sk-SWEEPSEC1", "http://h:1/?sig=sk-SWEEPSEC2"]}}`, body,
		}, "bench.yaml:1: sweep.parameters.endpoint.url"},
		{"secret extra input", []string{
			"sweep: {parameters: {endpoint.extra.token: [sk-SWEEPSEC1, sk-SWEEPSEC2]}}", body,
		}, "bench.yaml:1: sweep.parameters.endpoint.extra.token"},
		{"a whole endpoint", []string{
			"benchmark: {model: m, phases: {requests: 2}}",
			`sweep: {parameters: {endpoint: [{url: "http://h:1", api_key: sk-SWEEPSEC1}, {url: "http://h:2", api_key: sk-SWEEPSEC2}]}}`,
		}, "bench.yaml:2: sweep.parameters.endpoint"},
		{"a variable the key is set from", []string{
			`benchmark: {model: m, endpoint: {url: "http://h:1", api_key: "{{ key }}"}, phases: {requests: 2}}`,
			"variables: {key: none}",
			"sweep: {parameters: {variables.key: [sk-SWEEPSEC1, sk-SWEEPSEC2]}}",
		}, "bench.yaml:3: sweep.parameters.variables.key"},
		{"a scenario named by its key", []string{
			body,
			"sweep:",
			"  type: scenarios",
			"  runs:",
			"    - {name: sk-SWEEPSEC1, benchmark: {endpoint: {api_key: sk-SWEEPSEC1}}}",
			"    - {name: other, benchmark: {endpoint: {api_key: sk-SWEEPSEC2}}}",
		}, "bench.yaml:5: sweep.runs[0].name"},
		{"the flat shape", []string{
			"model: m",
			`endpoint: {url: "http://h:1"}`,
			"phases: {requests: 2}",
			"sweep: {variables: {benchmark.endpoint.api_key: [sk-SWEEPSEC1, sk-SWEEPSEC2]}}",
		}, "bench.yaml:4: sweep.variables.endpoint.api_key"},
		{"listed twice", []string{
			"sweep: {type: grid, parameters: {endpoint.api_key: [sk-SWEEPSEC1, sk-SWEEPSEC1]}}", body,
		}, "bench.yaml:1: sweep.parameters.endpoint.api_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(tt.yaml...)
			require.Error(t, err)
			assert.Equal(t, tt.at+": "+notSwept, err.Error())
			assert.NotContains(t, err.Error(), "SWEEPSEC")
		})
	}
}

// A sweep of values that are no secrets, beside a secret set once, runs.
func TestSweepBesideSecret(t *testing.T) {
	f, err := parse(
		`benchmark: {model: m, endpoint: {url: "http://h:1", api_key: sk-BASESECRET}, phases: {requests: 2}}`,
		"sweep: {parameters: {concurrency: [1, 2], model: [a, b]}}",
	)
	require.NoError(t, err)
	require.Len(t, f.Sweep.Variations, 4)
	assert.Equal(t, "sk-BASESECRET", f.Sweep.Variations[3].Profile.APIKey)
}

// A config file over MaxFileBytes is refused naming the file and the cap,
// without reading it whole; so is such data given to Parse.
func TestConfigSizeCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	valid := "benchmark: {model: m, phases: {requests: 2}}\n# "
	require.NoError(t, os.WriteFile(path, []byte(valid), 0o644))
	require.NoError(t, os.Truncate(path, 500<<20)) // sparse: 500 MB that cost nothing
	_, err := Load(path)
	require.Error(t, err)
	assert.Equal(t, "read config: "+path+" is larger than 1 MiB, "+tooLarge, err.Error())

	_, err = Parse("big.yaml", append([]byte(valid), bytes.Repeat([]byte("x"), MaxFileBytes)...))
	require.EqualError(t, err, "big.yaml:1: the file is larger than 1 MiB, "+tooLarge)

	_, err = Load("/dev/zero")
	require.ErrorContains(t, err, "is a device, not a regular file")
}

// The envelope's keys, and a variable, may be given once.
func TestEnvelopeKeysOnce(t *testing.T) {
	_, err := parse(
		"benchmark: {model: m, phases: {requests: 2}}",
		"sweep: {parameters: {concurrency: [1, 2]}}",
		"multi_run: {num_runs: 2}",
		"variables: {a: 1, b: 2, a: 3}",
		"sweep: {parameters: {concurrency: [3, 4]}}",
		"multiRun: {num_runs: 3}",
		"variables: {c: 1}",
	)
	require.Error(t, err)
	assert.Equal(t, strings.Join([]string{
		`bench.yaml:4: variables.a: repeats key "a" of line 4`,
		`bench.yaml:5: sweep: repeats key "sweep" of line 2`,
		`bench.yaml:6: multiRun: repeats key "multi_run" of line 3`,
		`bench.yaml:7: variables: repeats key "variables" of line 4`,
	}, "\n"), err.Error())
}

// Too many values without an alias are refused at the line where the
// limit was passed, saying which limit, without naming aliases.
func TestValueLimitWithoutAliases(t *testing.T) {
	values := make([]string, maxValues+1)
	for i := range values {
		values[i] = strconv.Itoa(i)
	}
	_, err := parse(
		"benchmark:",
		"  model: m",
		"  extra: {x: ["+strings.Join(values, ", ")+"]}",
	)
	require.EqualError(t, err, "bench.yaml:3: the file holds more than 100000 values, the most a config file may hold: "+
		"keep data out of the config (datasets, traces and prompts go in the files it names)")
}

// A misspelt key of the flat shape is named among the flat shape's keys;
// a misspelt bare sweep parameter is named once, before the sweep expands.
func TestTypoSuggestions(t *testing.T) {
	_, err := parse(
		"model: m",
		`endpont: {url: "http://h:1"}`,
	)
	require.EqualError(t, err, `bench.yaml:2: (top level): unknown key "endpont" (did you mean "endpoint"?)`)

	_, err = parse("model: m", "otel_bogus: 1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown key "otel_bogus" (expected one of: model, models, endpoint,`)
	assert.NotContains(t, err.Error(), "schema_version")

	_, err = parse(
		"sweep: {type: grid, parameters: {concurency: [1, 2]}}",
		`benchmark: {model: m, endpoint: {url: "http://h:1"}}`,
	)
	require.EqualError(t, err, `bench.yaml:1: sweep.parameters.concurency: unknown key "concurency" (did you mean "concurrency"?)`)

	_, err = parse(
		"sweep: {type: grid, parameters: {endpont.url: [http://h:1, http://h:2]}}",
		`benchmark: {model: m, endpoint: {url: "http://h:1"}}`,
	)
	require.EqualError(t, err, `bench.yaml:1: sweep.parameters.endpont.url: unknown key "endpont" (did you mean "endpoint"?)`)
}

// A value from the environment is text: ${KEY:} is "" in the body as read,
// so that the body printed reads back.
func TestEmptyEnvDefaultIsText(t *testing.T) {
	t.Setenv("AIPERF_TEST_MODEL", "123")
	f, err := parse(
		"benchmark:",
		"  model: ${AIPERF_TEST_MODEL}",
		"  endpoint:",
		`    url: "http://h:1"`,
		"    api_key: ${AIPERF_TEST_UNSET_KEY:}",
		"  phases: {requests: 2}",
	)
	require.NoError(t, err)
	out, err := yaml.Marshal(map[string]*yaml.Node{"benchmark": f.Body})
	require.NoError(t, err)
	assert.Contains(t, string(out), `api_key: ""`)
	again, err := Parse("printed.yaml", out)
	require.NoError(t, err, "%s", out)
	assert.Equal(t, []string{"123"}, again.Profile.Model)
	assert.Empty(t, again.Profile.APIKey)
}

// A header name that is not an HTTP token is refused where it is written,
// without its value: "Authorization:Bearer" would send an Authorization
// header whose value starts "Bearer:", unredacted by expand.
func TestHeaderNameRefused(t *testing.T) {
	_, err := parse(`benchmark: {model: m, endpoint: {url: "http://127.0.0.1:1", headers: {"Authorization:Bearer": HDRSECRET9}}, phases: {requests: 1}}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "benchmark.endpoint.headers: header name")
	assert.NotContains(t, err.Error(), "HDRSECRET9")
}

// A key set once in the body is no swept secret, even where a swept value
// holds its text: vLLM's placeholder key "EMPTY" beside a model named
// "EMPTY-x", a key "1234" beside a concurrency of 1234.
func TestSweepValueHoldingTheBodysKey(t *testing.T) {
	for _, c := range [][2]string{
		{"EMPTY", "model: [EMPTY-x, y]"},
		{"test", "model: [test-a, test-b]"},
		{`"1234"`, "concurrency: [1234, 8]"},
	} {
		_, err := parse(
			`benchmark: {model: m, endpoint: {url: "http://h:1", api_key: `+c[0]+`}, phases: {requests: 2}}`,
			"sweep: {parameters: {"+c[1]+"}}",
		)
		assert.NoError(t, err, c[1])
	}
}
