package plan

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// The seed corpora live in testdata/fuzz/<Name>/; `go test` runs them as
// ordinary tests, `go test -fuzz=<Name>` explores from them.

// FuzzParseExtraInput: any --extra-inputs value is either refused or gives a
// request-body fragment that encodes as JSON, under a non-blank key for the
// key:value form.
func FuzzParseExtraInput(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseExtraInput(s)
		if err != nil {
			if m != nil {
				t.Fatalf("%q: error %v with a result", s, err)
			}
			return
		}
		if m == nil {
			t.Fatalf("%q: no error and no result", s)
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("%q: accepted but cannot be sent: %v", s, err)
		}
		if !strings.HasPrefix(strings.TrimSpace(s), "{") {
			for k := range m {
				if k == "" || k != strings.TrimSpace(k) {
					t.Fatalf("%q: key %q", s, k)
				}
			}
		}
	})
}

// FuzzHeader: an accepted --header goes on the wire as exactly one header
// with its name and value (no injection); a refused one whose name looks
// secret is shown as its leading name characters and Redacted only.
func FuzzHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, h string) {
		err := CheckHeader(h)
		if err == nil {
			k, v, _ := strings.Cut(h, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			sent := http.Header{}
			sent.Add(k, v)
			var b strings.Builder
			if err := sent.Write(&b); err != nil {
				t.Fatal(err)
			}
			got, err := textproto.NewReader(bufio.NewReader(strings.NewReader(b.String() + "\r\n"))).ReadMIMEHeader()
			if err != nil {
				t.Fatalf("%q: accepted, but the wire form %q does not parse: %v", h, b.String(), err)
			}
			if len(got) != 1 || len(got[http.CanonicalHeaderKey(k)]) != 1 || got.Get(k) != v {
				t.Fatalf("%q: accepted, but the wire form %q reads back as %v", h, b.String(), got)
			}
			return
		}
		name, _, _ := strings.Cut(h, ":")
		if !IsSecretHeader(name) {
			return
		}
		msg := err.Error()
		i := strings.LastIndex(msg, "got ")
		if i < 0 {
			t.Fatalf("%q: message %q does not show the value", h, msg)
		}
		shown, err := strconv.Unquote(msg[i+len("got "):])
		if err != nil {
			t.Fatalf("%q: message %q does not end with the quoted value", h, msg)
		}
		word, ok := strings.CutSuffix(shown, Redacted)
		word = strings.TrimSuffix(word, " ")
		if !ok || !strings.HasPrefix(strings.TrimLeft(h, " \t"), word) || (word != "" && !isHeaderName(word)) {
			t.Fatalf("%q: a secret header is shown as %q", h, shown)
		}
	})
}

// FuzzURL: URL handling never panics, and redaction leaves no userinfo the
// URL parser would find, whatever the escaping or a later parse error.
func FuzzURL(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw string) {
		p := NewProfile()
		p.Model, p.URL = []string{"m"}, []string{raw}
		p.ResetKVCache = true
		_ = p.RequestURLs()
		origins := p.Origins()
		red := RedactURL(raw)
		if RedactURL(red) != red {
			t.Fatalf("%q: redacting twice changes %q", raw, red)
		}
		for _, fe := range FieldErrors(p.Check()) {
			if red != raw && strings.Contains(fe.Msg, strconv.Quote(raw)) {
				t.Fatalf("%q: check message %q shows the URL unredacted", raw, fe.Error())
			}
		}
		u, err := url.Parse(NormalizeURL(raw))
		if err != nil || u.User == nil {
			return
		}
		if !strings.Contains(red, Redacted) {
			t.Fatalf("%q: userinfo %q left in %q", raw, u.User, red)
		}
		if v, err := url.Parse(NormalizeURL(strings.Replace(red, Redacted, "x", 1))); err == nil && v.User != nil && v.User.String() != "x" {
			t.Fatalf("%q: %q still holds userinfo %q", raw, red, v.User)
		}
		if pw, ok := u.User.Password(); ok && pw != "" {
			for _, o := range origins {
				if strings.Contains(o, "@") {
					t.Fatalf("%q: origin %q holds userinfo", raw, o)
				}
			}
			if r := p.Redacted(); r.URL[0] != red {
				t.Fatalf("%q: Redacted gives %q, RedactURL %q", raw, r.URL[0], red)
			}
		}
	})
}
