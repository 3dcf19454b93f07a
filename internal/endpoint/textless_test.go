package endpoint

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMalformedLinesWithoutTextAreInvalid: a stream whose valid chunks
// carried no generated text while some data lines were not chunks of the
// API (here each text line lacks its closing brace) is not a success with
// the server's usage as its OSL: the lines that were not chunks may have
// been its output. A text-free stream of valid chunks alone stays a
// success, as does one whose malformed lines sit beside valid text.
func TestMalformedLinesWithoutTextAreInvalid(t *testing.T) {
	usage := `data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}` + "\n\n"
	garbage := `data: {"choices":[{"index":0,"delta":{"content":" hello"}}]` + "\n\n"
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"only malformed text lines", chunked(200, "text/event-stream", role, garbage, garbage, fin, usage, done),
			`no response chunk carried generated text: 2 data line(s) were not response chunks (first: "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\" hello\"}}]")`},
		{"malformed lines and an empty reply", chunked(200, "text/event-stream", role, "data: not json\n\n", fin, done),
			"no response chunk carried generated text: 1 data line(s) were not response chunks"},
		{"an empty reply", chunked(200, "text/event-stream", role, fin, done), ""},
		{"malformed lines beside text", chunked(200, "text/event-stream", role, garbage, tokA, fin, done), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(tc.raw))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
			if tc.want == "" {
				require.Nil(t, res.Err)
				return
			}
			require.NotNil(t, res.Err, "%s is not a success", tc.name)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, tc.want)
		})
	}
}
