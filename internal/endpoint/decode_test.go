package endpoint

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var decodeSeeds = []string{
	strings.TrimPrefix(strings.TrimSpace(role), "data: "),
	strings.TrimPrefix(strings.TrimSpace(tokA), "data: "),
	strings.TrimPrefix(strings.TrimSpace(fin), "data: "),
	strings.TrimPrefix(strings.TrimSpace(usage), "data: "),
	`{"choices":[{"text":"x","index":0,"finish_reason":"length"}],"usage":{"completion_tokens":2,"prompt_tokens":9,"total_tokens":11}}`,
	`{"choices":[{"delta":{"reasoning_content":"think","content":null}}]}`,
	`{"choices":[{"delta":{"reasoning":"r\u00e9\ud83d\ude00\ud800x"}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"a\":"}},{"function":{"arguments":"1}"}}]}}]}`,
	`{"choices":[{"message":{"role":"assistant","content":"hello\n\"world\"\/\t"}}],"usage":null}`,
	`{"error":{"message":"boom","code":500}}`,
	`{"error":"overloaded","choices":null}`,
	`{"CHOICES":[{"Delta":{"Content":"folded"}}],"cho\u0069ces":[{"delta":{"content":"esc"}}]}`,
	`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}],"x":[1,{"y":"}"},"\\\"]"],"n":-1.5e+3,"t":true,"f":false}`,
	"{\"choices\":[{\"text\":\"bad \xff utf8\"}]}",
	` { "choices" : [ { "delta" : { "content" : "sp" } } ] } `,
	`{"choices":[],"choices":[{"delta":{"content":"dup"}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"second"}},{"index":0,"delta":{"content":"first"}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"only the second"}}]}`,
	`{"choices":[{"index":0,"delta":{"role":"assistant"}},{"index":2,"delta":{"content":""}},{"index":3,"text":"t"},{"index":0,"text":"dup"}]}`,
	`{"choices":[{"index":4,"message":{"tool_calls":[{"function":{"arguments":"{}"}}]}}],"choices":[{"index":5,"delta":{"reasoning":"r"}}]}`,
	`{"choices":[{"index":"0","delta":{"content":"odd index"}}],"choices":null}`,
	`{"choices":[],"usage":{"prompt_tokens":-1,"completion_tokens":null,"total_tokens":1.5}}`,
	`{"choices":[],"usage":{"prompt_tokens":"3","completion_tokens":true,"prompt_tokens_details":{"cached_tokens":9}}}`,
	`{"choices":[],"usage":{"prompt_tokens":1e300,"completion_tokens":2.0,"completion_tokens_details":{"reasoning_tokens":-2}}}`,
	`{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3},"metrics":{"speculative_decoding":{"mean_acceptance_length":1.5,` +
		`"draft_acceptance_rate":0.25,"acceptance_histogram":[1,1],"num_accepted_draft_tokens":1,"num_draft_tokens":4,"num_spec_steps":2}}}`,
	`{"choices":[],"Metrics":{"Speculative_Decoding":null},"metrics":null}`,
	`{"choices":[],"metrics":{"speculative_decoding":{"mean_acceptance_length":1},"other":[1,2]},"metrics":{"x":1}}`,
	// Keys that fold to a field through a multi-byte rune (ſ folds to s).
	`{"choiceſ":[{"delta":{"contentſ":"no","reaſoning":"long s"}}],"uſage":{"prompt_tokens":1}}`,
	`{"choices":[{"DELTA":{"Content":"upper"}}],"Usage":{"prompt_tokens":2}}`,
}

func TestDecodeChunk(t *testing.T) {
	for _, in := range decodeSeeds {
		t.Run(in, func(t *testing.T) { compareDecoders(t, []byte(in)) })
	}
	for _, bad := range []string{`{"choices":[{"delta":{"con`, `{"choices":"odd"}`, `{"choices":[{"delta":{"content":7}}]}`, `{}x`, `{"a":}`, `{"a" 1}`, `[]`} {
		var w wireChunk
		assert.Error(t, decodeChunk([]byte(bad), &w), bad)
	}
}

// compareDecoders checks decodeChunk against encoding/json on data.
func compareDecoders(t *testing.T, data []byte) {
	t.Helper()
	var got wireChunk
	gotErr := decodeChunk(data, &got)
	var want wireChunk
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' || json.Unmarshal(data, &want) != nil {
		return // invalid for encoding/json: the scanner may accept or refuse it, but must not panic
	}
	require.NoError(t, gotErr, "encoding/json accepts %q", data)
	gotText, gotReasoning := got.output()
	wantText, wantReasoning := want.output()
	require.Equal(t, wantText, gotText, "text of %q", data)
	require.Equal(t, wantReasoning, gotReasoning, "reasoning of %q", data)
	require.Equal(t, want.usage(), got.usage(), "usage of %q", data)
	require.Equal(t, want.specDecode(), got.specDecode(), "speculative decoding of %q", data)
	require.Equal(t, want.failure(200), got.failure(200), "error of %q", data)
	require.Equal(t, want.first() == nil, got.first() == nil, "choice 0 of %q", data)
	require.Equal(t, want.Choices != nil, got.hasChoices, "choices array of %q", data)
	wantOther, wantHas := want.other()
	gotOther, gotHas := got.other()
	require.Equal(t, wantHas, gotHas, "another choice with output in %q", data)
	require.Equal(t, wantOther, gotOther, "the other choice's index in %q", data)

	// A reused, reset target decodes the same.
	got.reset()
	require.NoError(t, decodeChunk(data, &got))
	gotText, _ = got.output()
	require.Equal(t, wantText, gotText)

	// So does the read loop's decoder, whose strings alias the input and a
	// scratch buffer that already holds something.
	scratch := []byte("left over from the previous event")
	got.reset()
	require.NoError(t, decodeTransient(data, &got, &scratch))
	gotText, gotReasoning = got.output()
	require.Equal(t, wantText, gotText, "transient text of %q", data)
	require.Equal(t, wantReasoning, gotReasoning, "transient reasoning of %q", data)
	require.Equal(t, want.usage(), got.usage(), "transient usage of %q", data)
}

func FuzzDecodeChunk(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { compareDecoders(t, data) })
}
