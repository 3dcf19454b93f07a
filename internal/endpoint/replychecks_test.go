package endpoint

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/payload"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// float32s is the base64 of little-endian float32s, as an embeddings
// server answers encoding_format base64.
func float32s(fs ...float32) string {
	b := make([]byte, 4*len(fs))
	for i, f := range fs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// embeddingsReply is an OpenAI embeddings list of the given data entries.
func embeddingsReply(entries ...string) string {
	return `{"object":"list","data":[` + strings.Join(entries, ",") + `],"usage":{"prompt_tokens":4,"total_tokens":4}}`
}

// replyCase is one reply and the failure it must be ("" for a success).
type replyCase struct {
	name, body, invalid string
}

// checkReplies sends req to a server answering each case's body, and
// checks it is a success, or an invalid response saying why.
func checkReplies(t *testing.T, req func(url string) Request, cases []replyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(fixed(200, "application/json", tc.body)))
			res := newTestClient(t, Options{}).Do(context.Background(), req(srv.url("/")))
			if tc.invalid == "" {
				require.Nil(t, res.Err, "a valid reply is a success")
				return
			}
			require.NotNil(t, res.Err, "not a valid reply of the API: a failed request")
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Equal(t, 200, res.Err.Code)
			assert.Contains(t, res.Err.Message, tc.invalid)
		})
	}
}

// TestEmbeddingsRepliesMustHoldOneVectorPerInput: an embeddings reply is a
// success only with one non-empty numeric vector per input sent, of one
// length, indices covering the inputs once; a string only as the base64
// of float32s the request asked for.
func TestEmbeddingsRepliesMustHoldOneVectorPerInput(t *testing.T) {
	e := func(index, vec string) string {
		return `{"object":"embedding","index":` + index + `,"embedding":` + vec + `}`
	}
	ok := e("1", "[0.3,0.4]")
	cases := []replyCase{
		{"valid", embeddingsReply(e("0", "[0.1,-2e-3]"), ok), ""},
		{"valid without indices", embeddingsReply(`{"object":"embedding","embedding":[1,2]}`, `{"object":"embedding","embedding":[3,4]}`), ""},
		{"empty vector", embeddingsReply(e("0", "[]"), ok), "data[0].embedding is empty"},
		{"nulls", embeddingsReply(e("0", "[null,null]"), ok), "data[0].embedding element 0 is not a number (null)"},
		{"a string element", embeddingsReply(e("0", `[0.1,"x"]`), ok), `data[0].embedding element 1 is not a number ("x")`},
		{"a nested list", embeddingsReply(e("0", `[[0.1,0.2]]`), ok), `element 0 is not a number ([0.1)`},
		{"a number beyond float64", embeddingsReply(e("0", "[1e999,0]"), ok), "element 0 is out of range (1e999)"},
		{"null embedding", embeddingsReply(e("0", "null"), ok), "data[0].embedding is null"},
		{"an object", embeddingsReply(e("0", `{"v":[1]}`), ok), "data[0].embedding is not a list of numbers"},
		{"a string not asked for", embeddingsReply(e("0", `"abc"`), ok), "data[0].embedding is a string, and the request did not ask for encoding_format base64"},
		{"base64 not asked for", embeddingsReply(e("0", `"`+float32s(1, 2)+`"`), ok), "did not ask for encoding_format base64"},
		{"index outside the inputs", embeddingsReply(e("0", "[1,2]"), e("2", "[1,2]")), "data[1] index 2 is outside the 2 inputs sent"},
		{"negative index", embeddingsReply(e("-1", "[1,2]"), ok), "data[0] index -1 is negative"},
		{"fractional index", embeddingsReply(e("0.5", "[1,2]"), ok), "data[0] index 0.5 is not an integer"},
		{"string index", embeddingsReply(e(`"0"`, "[1,2]"), ok), `data[0] index "0" is not an integer`},
		{"duplicate indices", embeddingsReply(e("1", "[1,2]"), ok), "data[1] index 1 came twice"},
		{"vectors of different lengths", embeddingsReply(e("0", "[1,2,3]"), ok), "data[1].embedding has 2 dimensions, data[0].embedding 3"},
		{"more vectors than inputs", embeddingsReply(e("0", "[1,2]"), ok, e("2", "[1,2]")), "3 embeddings came back for 2 inputs"},
	}
	for _, typ := range []string{plan.EndpointEmbeddings, plan.EndpointNIMEmbeddings} {
		t.Run(typ, func(t *testing.T) {
			checkReplies(t, func(url string) Request { return apiReq(url, typ, false) }, cases)
		})
	}
	t.Run("base64 asked for", func(t *testing.T) {
		b64 := func(url string) Request {
			r := apiReq(url, plan.EndpointEmbeddings, false)
			r.Extra = map[string]any{"encoding_format": "base64"}
			return r
		}
		checkReplies(t, b64, []replyCase{
			{"valid", embeddingsReply(e("0", `"`+float32s(1, 2)+`"`), e("1", `"`+float32s(3, 4)+`"`)), ""},
			{"not base64", embeddingsReply(e("0", `"abc"`), e("1", `"`+float32s(3, 4)+`"`)), "data[0].embedding is not valid base64"},
			{"not whole float32s", embeddingsReply(e("0", `"aGVsbG8="`), e("1", `"`+float32s(3, 4)+`"`)), "data[0].embedding decodes to 5 bytes, not a whole number of float32s"},
			{"empty", embeddingsReply(e("0", `""`), e("1", `"`+float32s(3, 4)+`"`)), "data[0].embedding is empty"},
			{"NaN", embeddingsReply(e("0", `"`+float32s(1, float32(math.NaN()))+`"`), e("1", `"`+float32s(3, 4)+`"`)), "data[0].embedding float32 1 is not finite"},
			{"lengths differ", embeddingsReply(e("0", `"`+float32s(1, 2, 3)+`"`), e("1", `"`+float32s(3, 4)+`"`)), "data[1].embedding has 2 dimensions, data[0].embedding 3"},
		})
	})
	t.Run("a payload sent as it is", func(t *testing.T) {
		// its inputs are not counted; its encoding_format is read from it
		req := func(url string) Request {
			r := apiReq(url, plan.EndpointEmbeddings, false)
			r.Payload = []byte(`{"model":"m","input":["a","b","c"],"encoding_format":"base64"}`)
			return r
		}
		checkReplies(t, req, []replyCase{
			{"three base64 vectors", embeddingsReply(e("0", `"`+float32s(1, 2)+`"`), e("1", `"`+float32s(3, 4)+`"`),
				e("2", `"`+float32s(5, 6)+`"`)), ""},
			{"a null", embeddingsReply(e("0", "null")), "data[0].embedding is null"},
		})
	})
	t.Run("chat embeddings", func(t *testing.T) {
		checkReplies(t, func(url string) Request { return apiReq(url, plan.EndpointChatEmbeddings, false) }, []replyCase{
			{"one conversation, one vector", embeddingsReply(e("0", "[1,2]")), ""},
			{"two vectors for one conversation", embeddingsReply(e("0", "[1,2]"), ok), "2 embeddings came back for 1 inputs"},
			{"nulls", embeddingsReply(e("0", "[null]")), "data[0].embedding element 0 is not a number (null)"},
		})
	})
}

// TestTemplateEmbeddingsRepliesAreChecked: a template reply read as
// embeddings must hold valid vectors too (their count is not known: a
// template may send the passages, or one text).
func TestTemplateEmbeddingsRepliesAreChecked(t *testing.T) {
	tmpl, err := payload.Load(`{"input": {{ texts|tojson }}}`)
	require.NoError(t, err)
	req := func(url string) Request {
		r := apiReq(url, plan.EndpointTemplate, false)
		r.Template = tmpl
		return r
	}
	e := func(index, vec string) string { return `{"index":` + index + `,"embedding":` + vec + `}` }
	checkReplies(t, req, []replyCase{
		{"valid data list", `{"data":[` + e("0", "[1,2]") + "," + e("1", "[3,4]") + `]}`, ""},
		{"valid embeddings list", `{"embeddings":[[1,2],[3,4]]}`, ""},
		{"valid embedding", `{"embedding":[1,2]}`, ""},
		{"nulls", `{"data":[` + e("0", "[null,null]") + `]}`, "data[0] embedding element 0 is not a number (null)"},
		{"empty", `{"embedding":[]}`, "embedding is empty"},
		{"a string element", `{"embeddings":[[0.1,"x"]]}`, `embeddings[0] embedding element 1 is not a number ("x")`},
		{"not base64", `{"data":[` + e("0", `"abc"`) + `]}`, "data[0] embedding is not valid base64"},
		{"duplicate indices", `{"data":[` + e("0", "[1]") + "," + e("0", "[2]") + `]}`, "data[1] index 0 came twice"},
		{"index outside", `{"data":[` + e("1", "[1]") + `]}`, "data[0] index 1 is outside the 1 embeddings sent"},
		{"lengths differ", `{"embeddings":[[1,2],[3]]}`, "embeddings[1] embedding has 1 dimensions, embeddings[0] 2"},
		{"more vectors than texts (a template may send passages too)", `{"embeddings":[[1],[2],[3]]}`, ""},
		{"Cohere v2's vectors by type", `{"embeddings":{"float":[[1,2],[3,4]],"int8":[[1,2],[3,4]]}}`, ""},
		{"Cohere v2's bad vectors", `{"embeddings":{"float":[[1,null]]}}`, "embeddings.float[0] embedding element 1 is not a number (null)"},
	})
}

// TestRankingsRepliesMustScorePassagesSent: each ranking needs an integer
// index within the passages sent (once) and a finite numeric score; null
// entries are invalid.
func TestRankingsRepliesMustScorePassagesSent(t *testing.T) {
	for _, api := range []struct {
		typ, score string
		wrap       func(entries string) string
	}{
		{plan.EndpointNIMRankings, "logit", func(s string) string { return `{"rankings":[` + s + `]}` }},
		{plan.EndpointHFTEIRankings, "score", func(s string) string { return `[` + s + `]` }},
		{plan.EndpointCohereRankings, "relevance_score", func(s string) string { return `{"results":[` + s + `]}` }},
	} {
		r := func(index, score string) string { return `{"index":` + index + `,"` + api.score + `":` + score + `}` }
		t.Run(api.typ, func(t *testing.T) {
			checkReplies(t, func(url string) Request { return apiReq(url, api.typ, false) }, []replyCase{
				{"valid", api.wrap(r("1", "2.5") + "," + r("0", "-1")), ""},
				{"one of two passages", api.wrap(r("1", "0")), ""},
				{"null entry", api.wrap(r("0", "1") + ",null"), "result 1 is not an object with an index"},
				{"index outside the passages", api.wrap(r("2", "1")), "result 0 index 2 is outside the 2 passages sent"},
				{"negative index", api.wrap(r("-1", "1")), "result 0 index -1 is negative"},
				{"fractional index", api.wrap(r("0.5", "1")), "result 0 index 0.5 is not an integer"},
				{"null index", api.wrap(r("null", "1")), "result 0 has no index"},
				{"duplicate index", api.wrap(r("0", "1") + "," + r("0", "2")), "result 1 index 0 came twice"},
				{"no score", api.wrap(`{"index":0}`), "result 0 has no " + api.score + " score"},
				{"null score", api.wrap(r("0", "null")), "result 0 " + api.score + " null is not a finite number"},
				{"string score", api.wrap(r("0", `"high"`)), "result 0 " + api.score + ` "high" is not a finite number`},
				{"score beyond float64", api.wrap(r("0", "1e999")), "result 0 " + api.score + " 1e999 is not a finite number"},
			})
		})
	}
}

// TestImageRetrievalRepliesMustDescribeImagesSent: each data entry is an
// object with an integer index within the images sent (once).
func TestImageRetrievalRepliesMustDescribeImagesSent(t *testing.T) {
	req := func(url string) Request {
		r := apiReq(url, plan.EndpointImageRetrieval, false)
		r.Media = []media.Item{media.PassThrough(media.Image, "https://example.com/a.png"), media.PassThrough(media.Image, "https://example.com/b.png")}
		return r
	}
	box := `"bounding_boxes":{"table":[{"x_min":0.1,"y_min":0.1,"x_max":0.5,"y_max":0.5,"confidence":0.9}]}`
	checkReplies(t, req, []replyCase{
		{"valid", `{"data":[{"index":0,` + box + `},{"index":1,` + box + `}]}`, ""},
		{"null entries", `{"data":[null,null]}`, "data[0] is not an object (null)"},
		{"a number entry", `{"data":[{"index":0},7]}`, "data[1] is not an object (7)"},
		{"no index", `{"data":[{` + box + `}]}`, "data[0] has no index"},
		{"index outside the images", `{"data":[{"index":2,` + box + `}]}`, "data[0] index 2 is outside the 2 images sent"},
		{"duplicate index", `{"data":[{"index":1},{"index":1}]}`, "data[1] index 1 came twice"},
	})
}
