package plan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedactorFindsEscapedSecrets: a server may escape any character of a
// key it echoes, and its JSON may be quoted again in another's message.
func TestRedactorFindsEscapedSecrets(t *testing.T) {
	t.Parallel()
	rd := NewRedactor("SPL/IT-SECRET-KEY/42", "clé-très-secrète")
	for name, tc := range map[string]struct{ in, want string }{
		`\/ (PHP)`:              {`{"c":"k=Bearer SPL\/IT-SECRET-KEY\/42!"}`, `{"c":"k=Bearer <redacted>!"}`},
		`\u of ASCII`:           {`"\u0053PL/IT-SECRET-KEY\u002F42"`, `"<redacted>"`},
		`\u of non-ASCII`:       {`"x clé-tr\u00e8s-secr\u00E8te y"`, `"x <redacted> y"`},
		`quoted twice`:          {`{"error":"{\"c\":\"SPL\\/IT-SECRET-KEY\\/42\"}"}`, `{"error":"{\"c\":\"<redacted>\"}"}`},
		`twice, beside a plain`: {`SPL/IT-SECRET-KEY/42 and SPL\/IT-SECRET-KEY\/42`, `<redacted> and <redacted>`},
		`escapes, no secret`:    {`{"c":"a\/b \u00e9 \n \x \u12"}`, `{"c":"a\/b \u00e9 \n \x \u12"}`},
		`a trailing backslash`:  {`SPL\/IT-SECRET-KEY\/4\`, `SPL\/IT-SECRET-KEY\/4\`},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, rd.Redact(tc.in))
		})
	}
}

// TestRedactorEscapedSurrogates: a secret beyond the BMP, as encoders
// that escape everything not ASCII write it.
func TestRedactorEscapedSurrogates(t *testing.T) {
	t.Parallel()
	rd := NewRedactor("key-🔑-value")
	assert.Equal(t, `"<redacted>"`, rd.Redact(`"key-\ud83d\udd11-value"`))
}

// TestUnescapeJSONMapsEveryByte: every decoded byte names where it came
// from, and decoding agrees with encoding/json.
func TestUnescapeJSONMapsEveryByte(t *testing.T) {
	t.Parallel()
	in := `a\"b\\c\/d\u00e9e\ud83d\udd11f\tg`
	out, at, ok := unescapeJSON(in, true)
	require.True(t, ok)
	var want string
	require.NoError(t, json.Unmarshal([]byte(`"`+in+`"`), &want))
	assert.Equal(t, want, out)
	require.Len(t, at, len(out)+1)
	assert.Equal(t, int32(len(in)), at[len(out)])
	for i := 1; i < len(at); i++ {
		assert.LessOrEqual(t, at[i-1], at[i], "offsets never go back")
	}
	e := strings.Index(out, "é")
	assert.Equal(t, int32(strings.Index(in, `\u00e9`)), at[e])
	assert.Equal(t, at[e], at[e+1], "both bytes of é come from one escape")
	_, _, ok = unescapeJSON(`no escapes \x`, true)
	assert.False(t, ok)
}

// FuzzRedactEscaped: whatever a server wraps a secret in, once or twice
// escaped, none is left to read after redaction.
func FuzzRedactEscaped(f *testing.F) {
	f.Add(`{"c":"`, `SPL\/IT-SECRET-KEY\/42`, `"}`)
	f.Add(`\`, `\u0053PL/IT-SECRET-KEY/42`, `\\u`)
	f.Add(`"\\"`, `SPL\\/IT-SECRET-KEY\\/42`, `\ud83d`)
	rd := NewRedactor("SPL/IT-SECRET-KEY/42")
	f.Fuzz(func(t *testing.T, before, secret, after string) {
		out := rd.Redact(before + secret + after)
		view := out
		for range escapeLevels + 1 {
			if strings.Contains(view, "SPL/IT-SECRET-KEY/42") && !strings.Contains(before+after, `\`) {
				t.Fatalf("left in %q (at %q)", out, view)
			}
			next, _, ok := unescapeJSON(view, false)
			if !ok {
				break
			}
			view = next
		}
	})
}

// TestProfileRedactorRedactsURLQueriesInText: a signed URL inside any text
// (an input file's image, a server's reply) loses its secret query values,
// whatever the profile's own secrets, and --redact-param adds names.
func TestProfileRedactorRedactsURLQueriesInText(t *testing.T) {
	t.Parallel()
	p := NewProfile()
	p.RedactParam = []string{"sess"}
	rd := p.Redactor()
	require.False(t, rd.Empty(), "no secret configured, yet URLs are looked at")
	in := `{"url":"https://b.s3.amazonaws.com/x.png?X-Amz-Signature=SIG123&w=1&sess=S1#f","t":"see http://h/a?b=c"}`
	assert.Equal(t, `{"url":"https://b.s3.amazonaws.com/x.png?X-Amz-Signature=<redacted>&w=1&sess=<redacted>#f","t":"see http://h/a?b=c"}`,
		rd.Redact(in))
	assert.True(t, NewRedactor().Empty(), "a bare Redactor still has nothing to do")

	// A signed URL a server writes in JSON with its slashes or '&' escaped.
	for in, want := range map[string]string{
		`{"url":"https:\/\/b.blob.core.windows.net\/x.png?st=1&sig=SIG123"}`:   `{"url":"https:\/\/b.blob.core.windows.net\/x.png?st=1&sig=<redacted>"}`,
		`{"url":"https://b.blob.core.windows.net/x.png?st=1\u0026sig=SIG123"}`: `{"url":"https://b.blob.core.windows.net/x.png?st=1\u0026sig=<redacted>"}`,
	} {
		assert.Equal(t, want, rd.Redact(in))
	}
}
