package endpoint

import (
	"bytes"
	"fmt"
	"io"
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

	// A file part (AIPerf's {"b64_data", "filename", "content_type"}) comes
	// after the fields; without a name or type, the key's and
	// application/octet-stream.
	b, ct, err = formBody([]byte(`{"z":"f","image":{"b64_data":"aGk=","filename":"a.png","content_type":"image/png"},` +
		`"raw":{"b64_data":""},"o":{"b64_data":1}}`))
	require.NoError(t, err)
	_, params, err = mime.ParseMediaType(ct)
	require.NoError(t, err)
	r := multipart.NewReader(bytes.NewReader(b), params["boundary"])
	var got []string
	for p, err := r.NextPart(); err == nil; p, err = r.NextPart() {
		data, _ := io.ReadAll(p)
		got = append(got, fmt.Sprintf("%s %q %s %s", p.FormName(), p.FileName(), p.Header.Get("Content-Type"), data))
	}
	assert.Equal(t, []string{`o ""  {"b64_data":1}`, `z ""  f`, `image "a.png" image/png hi`, `raw "raw" application/octet-stream `}, got)
	_, _, err = formBody([]byte(`{"image":{"b64_data":"a!"}}`))
	assert.ErrorContains(t, err, `field "image": b64_data is not valid base64`)
	for _, bad := range []string{`[1]`, `"s"`, `null`, `{`} {
		_, _, err := formBody([]byte(bad))
		assert.ErrorContains(t, err, "the body is not a JSON object", bad)
	}
}
