package plan

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --extra-inputs and -H parse as AIPerf's parse_str_or_dict_as_tuple_list:
// comma-separated key:value items, the values typed by coerce_value.
func TestExtraInputsSplitOnCommas(t *testing.T) {
	m, err := ParseExtraInput("temperature:0.7,top_p:0.9")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"temperature": 0.7, "top_p": 0.9}, m)
	m, err = ParseExtraInput("a:1, b:two")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": int64(1), "b": "two"}, m)
	// A comma inside a value: not every piece is key:value, taken whole.
	m, err = ParseExtraInput("stop:a,b")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"stop": "a,b"}, m)
	m, err = ParseExtraInput(`payload_template:{"a": {{ text|tojson }}, "b": 1}`)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"payload_template": `{"a": {{ text|tojson }}, "b": 1}`}, m)
}

func TestExtraInputsCoerceAsAIPerf(t *testing.T) {
	for in, want := range map[string]any{
		"true": true, "False": false, "TRUE": true, "None": nil, "null": nil, "NULL": nil,
		"0": int64(0), "7": int64(7), "007": "007", "-3": int64(-3), "-0": int64(0), "-07": "-07",
		"1.": 1.0, ".5": 0.5, "-.5": -0.5, "0.7": 0.7, "1.0": 1.0, "1.2.3": "1.2.3", ".": ".",
		"1e3": "1e3", "+1": "+1", "inf": "inf", "NaN": "NaN", "": "", "[1,2]": "[1,2]", `"x"`: `"x"`,
		"512x512": "512x512", "99999999999999999999": json.Number("99999999999999999999"),
	} {
		m, err := ParseExtraInput("k:" + in)
		require.NoError(t, err, in)
		assert.Equal(t, want, m["k"], "k:%s", in)
	}
	b, err := json.Marshal(map[string]any{"n": CoerceValue("None"), "d": CoerceValue("1e3")})
	require.NoError(t, err)
	assert.JSONEq(t, `{"n": null, "d": "1e3"}`, string(b))
}

func TestExtraInputsNOneStillAccepted(t *testing.T) {
	p := NewProfile()
	p.Model = []string{"m"}
	p.ExtraInputs = []string{"n:1", "best_of:1"}
	for _, fe := range FieldErrors(p.Check()) {
		assert.NotEqual(t, "extra_inputs", fe.Field, fe.Error())
	}
	p.ExtraInputs = []string{"n:2"}
	assert.Contains(t, p.Check().Error(), "n:2 asks for several choices")
}

func TestHeaderCommaListAndJSON(t *testing.T) {
	for in, want := range map[string][][2]string{
		"X-A:1,X-B:2":                          {{"X-A", "1"}, {"X-B", "2"}},
		"X-A: 1, X-B: 2":                       {{"X-A", "1"}, {"X-B", "2"}},
		"Accept: a, b":                         {{"Accept", "a, b"}},
		"Accept: text/html, application/json":  {{"Accept", "text/html, application/json"}},
		"X-Time: 10:00, 11:00":                 {{"X-Time", "10:00, 11:00"}},
		`{"X-A": "1", "X-B": "2"}`:             {{"X-A", "1"}, {"X-B", "2"}},
		`{"X-N": 5, "X-F": 1.50, "X-T": true}`: {{"X-N", "5"}, {"X-F", "1.50"}, {"X-T", "true"}},
	} {
		got, err := HeaderFields(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for in, msg := range map[string]string{
		`{"X-A": {"b": 1}}`:      "nested object or array",
		`{"X-A": [1]}`:           "nested object or array",
		`{"X-A": null}`:          "is null",
		`{"X A": "1"}`:           "not an HTTP header name",
		`{"X-A": "1"`:            "not valid JSON",
		`{"X-A": "1"} x`:         "after the object",
		`{"X-A": "a\nB: c"}`:     "control character",
		"X-A:1,X-B:2\nEvil: yes": "must be Key:Value",
	} {
		_, err := HeaderFields(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
	}
	assert.Equal(t, []string{"X-A:1", "X-B:2", "X-C:3", "Accept:a, b"},
		ExpandHeaders([]string{"X-A:1,X-B:2", `{"X-C": "3"}`, "Accept: a, b"}))
}
