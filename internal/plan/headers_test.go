package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckRefusesAPIKeyControlCharacters: an API key with a line break or
// another control character cannot go into an HTTP header; it is refused
// at validation, naming --api-key and never showing the key.
func TestCheckRefusesAPIKeyControlCharacters(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"sk-NLSECRET1\r\nX-Evil: 1", "sk-NLSECRET1\n", "sk-NLSECRET1\x00", "sk-NLSECRET1\x7f", "\rsk-NLSECRET1"} {
		p := valid()
		p.APIKey = key
		msg := onlyError(t, p.Check(), "api_key")
		assert.True(t, strings.HasPrefix(msg, "--api-key holds a control character"), msg)
		assert.NotContains(t, msg, "NLSECRET1", "the key is never shown")
	}
	p := valid()
	p.APIKey = "sk-ok\tkey with spaces"
	require.NoError(t, p.Check(), "a tab or a space is a valid header value character")
}

// TestCheckHeaderName: a header name given on its own must be an RFC 9110
// token; a colon, space, control character or nothing is refused, and
// what follows a secret name is never shown.
func TestCheckHeaderName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"Authorization", "X-Api-Key", "x_custom.header~1", "!#$%&'*+-.^_`|~"} {
		require.NoError(t, CheckHeaderName(ok), ok)
	}
	for _, bad := range []string{"", "Authorization:Bearer", "X Trace", "X-Trace\r\nX-Evil", "X-Trace\x00", " X-Trace", "Ünicode", "X(1)"} {
		err := CheckHeaderName(bad)
		require.Error(t, err, "%q", bad)
		assert.True(t, strings.HasPrefix(err.Error(), "must be an HTTP header name"), err.Error())
	}
	for _, secret := range []string{"Authorization:Bearer HDRSECRET9", "Authorization Bearer HDRSECRET9", "X-Api-Key:HDRSECRET9"} {
		err := CheckHeaderName(secret)
		require.Error(t, err, secret)
		assert.NotContains(t, err.Error(), "HDRSECRET9", secret)
		assert.Contains(t, err.Error(), Redacted, secret)
	}
	assert.Contains(t, CheckHeaderName("X Trace").Error(), `got "X Trace"`, "a name that is not secret is shown")
}

// TestCheckRefusesBadHeaderNames: every --header whose name is not an
// HTTP token is refused, whatever sets it (flags, a script's header=, a
// config file's list), naming --header.
func TestCheckRefusesBadHeaderNames(t *testing.T) {
	t.Parallel()
	for _, h := range []string{":v", " X-A:v", "X A:v", "X-A\r\n:v", "X-A\x00:v", "X(A):v", "Ünicode:v"} {
		p := valid()
		p.Header = []string{h}
		msg := onlyError(t, p.Check(), "header")
		assert.True(t, strings.HasPrefix(msg, "--header must be Key:Value with Key an HTTP header name"), msg)
	}
}
