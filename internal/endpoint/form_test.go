package endpoint

import (
	"bytes"
	"mime"
	"mime/multipart"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFormBody: a JSON object becomes a form, a field per key in key
// order, strings as they are and other values (null included) as JSON; a
// body that is not an object is refused.
func TestFormBody(t *testing.T) {
	b, ct, err := formBody([]byte(`{"prompt":"a \"b\"","n":2,"stream":true,"x":null,"o":{"k":[1]}}`))
	require.NoError(t, err)
	mt, params, err := mime.ParseMediaType(ct)
	require.NoError(t, err)
	assert.Equal(t, "multipart/form-data", mt)
	form, err := multipart.NewReader(bytes.NewReader(b), params["boundary"]).ReadForm(1 << 20)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"prompt": {`a "b"`}, "n": {"2"}, "stream": {"true"}, "x": {"null"}, "o": {`{"k":[1]}`}},
		form.Value)
	for _, bad := range []string{`[1]`, `"s"`, `null`, `{`} {
		_, _, err := formBody([]byte(bad))
		assert.ErrorContains(t, err, "the body is not a JSON object", bad)
	}
}
