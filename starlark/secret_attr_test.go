package starlark_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/starlark"
)

const secretBase = `base = profile(model = "m", url = "http://user:pa55word@127.0.0.1:19380", api_key = vars.get("key"),
    header = ["X-Api-Key: hdr-SECRET-42", "X-Tenant: team-a"], request_count = 5, concurrency = 4)
`

// A profile's secrets read back as <redacted> (p.api_key, a secret header's
// value, a URL's credentials), so that a script cannot make a sweep's name,
// a cell's label, a directory or a stored value of one; the other options
// read back as they are, and p.replace() keeps the secrets.
func TestProfileSecretsReadBackRedacted(t *testing.T) {
	t.Parallel()
	sweeps := loadScript(t, secretBase+`
if base.api_key != "<redacted>":
    fail("api_key read back as a secret")
if base.header != ["X-Api-Key:<redacted>", "X-Tenant: team-a"]:
    fail("header read back: %s" % base.header)
if "pa55word" in base.url[0] or "127.0.0.1:19380" not in base.url[0]:
    fail("url read back: %s" % base.url)
if base.concurrency != 4 or base.model != ["m"]:
    fail("plain options read back changed")
sweep(name = "kept", base = base.replace(concurrency = 8))
`, starlark.Options{Vars: map[string]string{"key": "SECRETKEYVALUE123456"}})
	require.Len(t, sweeps, 1)
	p := sweeps[0].Cells[0].Profile
	assert.Equal(t, "SECRETKEYVALUE123456", p.APIKey, "replace keeps the secret")
	assert.Equal(t, []string{"X-Api-Key: hdr-SECRET-42", "X-Tenant: team-a"}, p.Header)
	assert.Equal(t, []string{"http://user:pa55word@127.0.0.1:19380"}, p.URL)
}

// The tester's scripts: a sweep named by the key, the key as a swept
// value; and the read-back marker given back as a secret.
func TestProfileSecretCannotBecomeANameOrAValue(t *testing.T) {
	t.Parallel()
	vars := starlark.Options{Vars: map[string]string{"key": "SECRETKEYVALUE123456"}}
	for name, tc := range map[string]struct{ src, msg string }{
		"a sweep named by it": {`sweep(name = base.api_key, base = base)`, `sweep: name "<redacted>" may only use letters, digits`},
		"a swept value":       {`sweep(name = "e6", base = base, matrix = {"model": [base.api_key, "b"]})`, `model: <redacted> is what a profile's secret reads back as`},
		"given back":          {`sweep(name = "e", base = base.replace(api_key = base.api_key))`, `replace: api_key: <redacted> is what a profile's secret reads back as`},
		"headers given back":  {`sweep(name = "e", base = profile(model = "m", header = base.header))`, `profile: header: <redacted> is what`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadFiles(t, map[string]string{"sweeps.star": secretBase + tc.src + "\n"}, vars)
			errs := scriptErrors(t, err)
			require.Len(t, errs, 1, "%v", err)
			assert.Contains(t, errs[0].Msg, tc.msg)
			assert.NotContains(t, err.Error(), "SECRETKEYVALUE123456")
		})
	}
}
