package plan

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
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
		`a trailing backslash`:  {`SPL\/IT-SECRET-KEY\/4\`, `<redacted>\`}, // the key's first 19 characters
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

// TestRedactorFindsAlteredSecrets: a server echoes a key upper-cased (an
// error message shouted), lower-cased, or cut to its first characters with
// the rest masked; as written, escaped or both.
func TestRedactorFindsAlteredSecrets(t *testing.T) {
	t.Parallel()
	// A header's value, and its credential (as Profile.Secrets lists them).
	rd := NewRedactor("sk-ZZTOPSECRETKEY4242", "Pass-word1", "Bearer tok-abcdefgh12345678", "tok-abcdefgh12345678")
	for name, tc := range map[string]struct{ in, want string }{
		"upper-cased":                  {`{"error":"INVALID KEY SK-ZZTOPSECRETKEY4242"}`, `{"error":"INVALID KEY <redacted>"}`},
		"lower-cased":                  {`key sk-zztopsecretkey4242.`, `key <redacted>.`},
		"first 12 characters":          {`key sk-ZZTOPSECR*********`, `key <redacted>*********`},
		"first 12, any case":           {`key SK-ZZTOPSECR... is wrong`, `key <redacted>... is wrong`},
		"8 characters are not enough":  {`key SK-ZZTOP... is wrong`, `key SK-ZZTOP... is wrong`},
		"prefix escaped":               {`{"m":"SK-ZZTOP\u0053ECR***"}`, `{"m":"<redacted>***"}`},
		"prefix quoted twice":          {`{"e":"{\"m\":\"sk-ZZTOPSEC\\u0052***\"}"}`, `{"e":"{\"m\":\"<redacted>***\"}"}`},
		"prefix then the whole key":    {`sk-ZZTOPSECRsk-ZZTOPSECRETKEY4242`, `<redacted><redacted>`},
		"two echoes":                   {`a sk-zztopsecr b SK-ZZTOPSECRETKEY4242 c`, `a <redacted> b <redacted> c`},
		"a 10-character secret, cased": {`PASS-WORD1 and pass-word1`, `<redacted> and <redacted>`},
		"its prefix is not a secret":   {`Pass-wor`, `Pass-wor`},
		"7 characters of a long key":   {`sk-ZZTO and sk-zztoZ`, `sk-ZZTO and sk-zztoZ`},
		"a header's credential prefix": {`TOK-ABCDEFGH***`, `<redacted>***`},
		"not a header value's prefix":  {`missing Bearer token`, `missing Bearer token`},
		"the marker stays":             {`<redacted> <REDACTED>`, `<redacted> <REDACTED>`},
		"words are left":               {`the quick brown fox skipped the sketch`, `the quick brown fox skipped the sketch`},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, rd.Redact(tc.in))
		})
	}
	// A secret that starts with the marker's word does not redact the
	// marker again and again.
	rd = NewRedactor("redacted-0123456789abcdef")
	assert.Equal(t, `x <redacted> y <redacted>`, rd.Redact(`x REDACTED-0123456789ABCDEF y redacted-012`))
	// A non-ASCII secret: its ASCII letters in any case, the rest as written.
	rd = NewRedactor("clé-très-secrète-42")
	assert.Equal(t, `<redacted>…`, rd.Redact(`CLé-TRès-SEC…`))
	// A URL's user:pass has no prefix rule: the user name is no secret.
	rd = NewRedactor("benchmark:s3cretpassw0rd")
	assert.Equal(t, `Benchmark results for benchmarking`, rd.Redact(`Benchmark results for benchmarking`))
	assert.Equal(t, `<redacted> and <redacted>`, rd.Redact(`BENCHMARK:S3CRETPASSW0RD and benchmark%3As3cretpassw0rd`))
}

// TestAppendRunsMatchesNaive: the single pass finds exactly the bytes that
// some run of p or more bytes beginning the pattern covers, on texts of
// few letters (many overlapping partial matches).
func TestAppendRunsMatchesNaive(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, pat := range []string{"aaaaaaaaaaaaaaaa", "abababababababab", "aabaabaaabaabaab", "abcabdabcabcabda"} {
		for p := 1; p <= len(pat); p += 3 {
			for range 300 {
				b := make([]byte, rng.IntN(60))
				for i := range b {
					b[i] = "abcd"[rng.IntN(2+rng.IntN(3))]
				}
				text := string(b)
				want := make([]bool, len(text))
				for i := range text {
					for l := p; l <= len(pat) && i+l <= len(text); l++ {
						if text[i:i+l] == pat[:l] {
							for k := i; k < i+l; k++ {
								want[k] = true
							}
						}
					}
				}
				got := make([]bool, len(text))
				for _, sp := range merge(appendRuns(nil, text, pat, p)) {
					for k := sp[0]; k < sp[1]; k++ {
						got[k] = true
					}
				}
				require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "pattern %q, p %d, text %q", pat, p, text)
			}
		}
	}
}

// TestAlteredSpansLinear: a text that partly matches a secret at every
// byte costs a bounded number of steps a byte, not the secret's length (a
// scan that tried each start would take 4096 steps a byte here: minutes).
func TestAlteredSpansLinear(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("a", 4096) + "b"
	text := strings.Repeat(strings.Repeat("a", 4095)+"c", 256) // 1 MiB: runs of 4095 a's, none the whole key
	require.Len(t, appendRuns(nil, text, secret, minPrefix), 256)
	assert.Equal(t, strings.Repeat("<redacted>c", 256), NewRedactor(secret).Redact(text))
}
