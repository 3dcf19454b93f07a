package mock

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCachedTokensEveryAPI: Responses and Messages replies report the
// prefix-cache hits in their own fields, as chat does in
// prompt_tokens_details (they carried none, so a reset that left the
// cache warm could not be seen in them): Responses'
// input_tokens_details.cached_tokens beside the whole input_tokens,
// Messages' cache_read_input_tokens beside input_tokens that leave them
// out, as Anthropic counts them; both streamed and not. A 61-token prompt
// sent twice has 48 tokens (3 blocks of 16) cached the second time.
func TestCachedTokensEveryAPI(t *testing.T) {
	for _, report := range []bool{true, false} {
		_, base := start(t, Config{Fast: true, NoCacheReport: !report}) // no tokenizer: a token every 4 bytes
		for i, stream := range []bool{false, true} {
			text := strings.Repeat(fmt.Sprintf("%04d", i), 61)
			responses := fmt.Sprintf(`{"model":"m","input":%q,"max_output_tokens":2,"stream":%t}`, text, stream)
			for round, cached := range []int{0, 48} {
				u := usageOf(t, base+"/v1/responses", responses, stream)
				want := map[string]any{"input_tokens": 61.0, "output_tokens": 2.0, "total_tokens": 63.0}
				if report {
					want["input_tokens_details"] = map[string]any{"cached_tokens": float64(cached)}
				}
				assert.Equal(t, want, u, "responses, stream %t, round %d", stream, round)
			}
			text = strings.Repeat(fmt.Sprintf("m%03d", i), 61)
			messages := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":%q}],"max_tokens":2,"stream":%t}`, text, stream)
			for round, cached := range []int{0, 48} {
				u := usageOf(t, base+"/v1/messages", messages, stream)
				want := map[string]any{"input_tokens": 61.0, "output_tokens": 2.0} // streamed: message_start's and message_delta's
				if report {
					want = map[string]any{"input_tokens": float64(61 - cached), "cache_read_input_tokens": float64(cached), "output_tokens": 2.0}
				}
				assert.Equal(t, want, u, "messages, stream %t, round %d", stream, round)
			}
		}
	}
}

// usageOf posts body and returns the reply's usage: a whole reply's, or a
// stream's, each event's usage merged over the last (Responses:
// response.completed's; Messages: message_start's and message_delta's).
func usageOf(t *testing.T, url, body string, stream bool) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	type event struct {
		Usage    map[string]any `json:"usage"`
		Response *struct {
			Usage map[string]any `json:"usage"`
		} `json:"response"`
		Message *struct {
			Usage map[string]any `json:"usage"`
		} `json:"message"`
	}
	usage := map[string]any{}
	merge := func(e event) {
		us := []map[string]any{e.Usage}
		if e.Response != nil {
			us = append(us, e.Response.Usage)
		}
		if e.Message != nil {
			us = append(us, e.Message.Usage)
		}
		for _, u := range us {
			for k, v := range u {
				usage[k] = v
			}
		}
	}
	if !stream {
		var e event
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
		merge(e)
		return usage
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var e event
			require.NoError(t, json.Unmarshal([]byte(data), &e), data)
			merge(e)
		}
	}
	require.NoError(t, sc.Err())
	return usage
}
