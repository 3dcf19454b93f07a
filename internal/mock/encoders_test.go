package mock

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncoderInputBound: an embeddings request's inputs and a rankings
// request's passages are at most 2048 (maxEncoderInputs) (a million one-letter
// inputs cost 1.3 GB and a 187 MB reply), refused with 400 beyond; the
// bound itself is served, one item each.
func TestEncoderInputBound(t *testing.T) {
	_, url := start(t, Config{})
	list := func(n int, item string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = item
		}
		return out
	}
	for _, tc := range []struct {
		path, field string
		body        func(n int) map[string]any
	}{
		{"/v1/embeddings", "input", func(n int) map[string]any { return map[string]any{"model": "m", "input": list(n, "a")} }},
		{"/v1/embeddings", "input", func(n int) map[string]any {
			ids := make([][]int, n)
			for i := range ids {
				ids[i] = []int{1, 2}
			}
			return map[string]any{"model": "m", "input": ids}
		}},
		{"/v2/rerank", "documents", func(n int) map[string]any {
			return map[string]any{"model": "m", "query": "q", "documents": list(n, "a")}
		}},
		{"/rerank", "texts", func(n int) map[string]any { return map[string]any{"query": "q", "texts": list(n, "a")} }},
		{"/v1/ranking", "passages", func(n int) map[string]any {
			ps := make([]map[string]string, n)
			for i := range ps {
				ps[i] = map[string]string{"text": "a"}
			}
			return map[string]any{"model": "m", "query": map[string]string{"text": "q"}, "passages": ps}
		}},
	} {
		resp := post(t, url+tc.path, tc.body(2049))
		body := readAll(t, resp)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, tc.path)
		assert.True(t, strings.Contains(body, tc.field+" holds more than 2048 items"), "%s: %.200s", tc.path, body)

		resp = post(t, url+tc.path, tc.body(2048))
		body = readAll(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%.200s", body)
		var reply struct {
			Data     []json.RawMessage `json:"data"`
			Rankings []json.RawMessage `json:"rankings"`
			Results  []json.RawMessage `json:"results"`
		}
		items := 0
		if strings.HasPrefix(body, "[") { // TEI: a bare list
			var r []json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(body), &r))
			items = len(r)
		} else {
			require.NoError(t, json.Unmarshal([]byte(body), &reply))
			items = len(reply.Data) + len(reply.Rankings) + len(reply.Results)
		}
		assert.Equal(t, 2048, items, tc.path)
	}
}

// TestEncoderMaxModelLen: each embeddings input, and each passage with its
// query, is held to --max-model-len with vLLM's message for pooling
// requests (an input may fill the context); a 501-token input was served.
func TestEncoderMaxModelLen(t *testing.T) {
	_, url := start(t, Config{MaxModelLen: 100}) // no tokenizer: a token every 4 bytes
	tokens := func(n int) string { return strings.Repeat("abcd", n) }
	refused := func(n int) string {
		return `"This model's maximum context length is 100 tokens. However, you requested ` + strconv.Itoa(n) +
			` tokens in the input for embedding generation. Please reduce the length of the input."`
	}
	for _, tc := range []struct {
		path string
		body map[string]any
		want string // "" : served
	}{
		{"/v1/embeddings", map[string]any{"input": tokens(100)}, ""},
		{"/v1/embeddings", map[string]any{"input": tokens(101)}, refused(101)},
		{"/v1/embeddings", map[string]any{"input": []string{tokens(100), tokens(100)}}, ""}, // each input on its own
		{"/v1/embeddings", map[string]any{"input": []string{"a", tokens(501)}}, refused(501)},
		{"/v1/embeddings", map[string]any{"input": [][]int{{1}, make([]int, 101)}}, refused(101)},
		{"/v1/embeddings", map[string]any{"messages": []map[string]string{{"role": "user", "content": tokens(60)},
			{"role": "user", "content": tokens(41)}}}, refused(101)},
		{"/v2/rerank", map[string]any{"query": tokens(50), "documents": []string{tokens(50)}}, ""},
		{"/v2/rerank", map[string]any{"query": tokens(50), "documents": []string{"a", tokens(51)}}, refused(101)},
		{"/rerank", map[string]any{"query": tokens(1), "texts": []string{tokens(500)}}, refused(501)},
		{"/v1/ranking", map[string]any{"query": map[string]string{"text": tokens(1)},
			"passages": []map[string]string{{"text": tokens(100)}}}, refused(101)},
	} {
		resp := post(t, url+tc.path, tc.body)
		body := readAll(t, resp)
		if tc.want == "" {
			assert.Equal(t, http.StatusOK, resp.StatusCode, body)
			continue
		}
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		assert.Contains(t, body, tc.want)
	}
}
