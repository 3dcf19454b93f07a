package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// secretWords make a URL query parameter or an --extra-inputs key secret
// when its name holds one as a word.
var secretWords = map[string]bool{
	"key": true, "apikey": true, "token": true, "sig": true, "signature": true, "secret": true,
	"password": true, "passwd": true, "pwd": true, "credential": true, "credentials": true,
	"auth": true, "authorization": true, "jwt": true, "cookie": true,
}

// IsSecretParam reports whether a URL query parameter or an --extra-inputs
// key names a credential: its name, split into words at '_', '-', '.' and
// case changes (api_key, apiKey, X-Amz-Signature, access_token), holds key,
// apikey, token, sig, signature, secret, password, passwd, pwd,
// credential(s), auth, authorization, jwt or cookie, in any case; or it is
// one of marked (--redact-param), in any case. A word must match whole:
// max_tokens and monkey name no secret.
func IsSecretParam(name string, marked []string) bool {
	name = strings.TrimSpace(name)
	for _, m := range marked {
		if strings.EqualFold(name, strings.TrimSpace(m)) {
			return true
		}
	}
	return slices.ContainsFunc(nameWords(name), func(w string) bool { return secretWords[w] })
}

// nameWords splits a name into lower-cased words: at every character that
// is not a letter or digit, before an upper-case letter that follows a
// lower-case one or a digit, and before the last of a run of upper-case
// letters followed by a lower-case one (AWSAccessKeyId: aws access key id).
func nameWords(name string) []string {
	var words []string
	var cur []rune
	rs := []rune(name)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && i > 0 {
			prev := rs[i-1]
			next := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && next {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// queryValue is one name=value pair of a URL's query: the value's span in
// the URL, as written.
type queryValue struct {
	name       string // unescaped
	start, end int    // raw[start:end] is the value as written
}

// queryValues lists the pairs of raw's query (after its first '?', before
// a '#', split at '&' only: a value holding ';' is redacted whole), without
// requiring the rest of the URL to be valid.
func queryValues(raw string) []queryValue {
	q := strings.IndexByte(raw, '?')
	if q < 0 || strings.Contains(raw[:q], "#") {
		return nil
	}
	end := len(raw)
	if h := strings.IndexByte(raw[q:], '#'); h >= 0 {
		end = q + h
	}
	var out []queryValue
	for at := q + 1; at <= end; {
		stop := end
		if amp := strings.IndexByte(raw[at:end], '&'); amp >= 0 {
			stop = at + amp
		}
		if eq := strings.IndexByte(raw[at:stop], '='); eq >= 0 {
			name := raw[at : at+eq]
			if u, err := url.QueryUnescape(name); err == nil {
				name = u
			}
			out = append(out, queryValue{name: name, start: at + eq + 1, end: stop})
		}
		at = stop + 1
	}
	return out
}

// redactQuery replaces the value of each secret query parameter of raw
// (IsSecretParam with marked).
func redactQuery(raw string, marked []string) string {
	vs := queryValues(raw)
	for i := len(vs) - 1; i >= 0; i-- { // from the end: earlier spans stay valid
		if v := vs[i]; v.end > v.start && IsSecretParam(v.name, marked) {
			raw = raw[:v.start] + Redacted + raw[v.end:]
		}
	}
	return raw
}

// querySecrets lists the values of raw's secret query parameters, as
// written and unescaped.
func querySecrets(raw string, marked []string) []string {
	var out []string
	for _, v := range queryValues(raw) {
		val := raw[v.start:v.end]
		if val == "" || val == Redacted || !IsSecretParam(v.name, marked) {
			continue
		}
		out = append(out, val)
		if u, err := url.QueryUnescape(val); err == nil && u != val {
			out = append(out, u)
		}
	}
	return out
}

// extraSecrets lists every value under a secret key (IsSecretParam) of the
// --extra-inputs entries, at any depth: strings as they are, numbers and
// booleans as their JSON text. Entries that do not parse hold none (the
// run is refused).
func extraSecrets(entries, marked []string) []string {
	var out []string
	var walk func(v any, secret bool)
	walk = func(v any, secret bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, secret || IsSecretParam(k, marked))
			}
		case []any:
			for _, e := range x {
				walk(e, secret)
			}
		case string:
			if secret && x != Redacted {
				out = append(out, x)
			}
		case nil:
		default:
			if secret {
				out = append(out, fmt.Sprint(x))
			}
		}
	}
	for _, e := range entries {
		m, err := ParseExtraInput(e)
		if err != nil {
			continue
		}
		walk(m, false)
		if k, v, ok := strings.Cut(e, ":"); ok && !strings.HasPrefix(strings.TrimSpace(e), "{") && IsSecretParam(k, marked) {
			out = append(out, strings.TrimSpace(v)) // a value as written (a number's digits)
		}
	}
	return out
}

// redactExtra returns the --extra-inputs entries with every value under a
// secret key replaced: a key:value entry keeps its key, a JSON object is
// written again (keys sorted) with Redacted for each such value. Entries
// without a secret are kept as written.
func redactExtra(entries, marked []string) []string {
	if len(entries) == 0 {
		return entries
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e
		m, err := ParseExtraInput(e)
		if err != nil || !redactValues(m, marked) {
			continue
		}
		if !strings.HasPrefix(strings.TrimSpace(e), "{") {
			k, _, _ := strings.Cut(e, ":")
			out[i] = k + ":" + Redacted
			continue
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(m) == nil {
			out[i] = strings.TrimSpace(b.String())
		} else {
			out[i] = Redacted
		}
	}
	return out
}

// redactValues replaces, in place, every value under a secret key of m,
// reporting whether there was one.
func redactValues(m map[string]any, marked []string) bool {
	found := false
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch x := m[k]; {
		case IsSecretParam(k, marked):
			if x != nil {
				m[k], found = Redacted, true
			}
		default:
			found = redactNested(x, marked) || found
		}
	}
	return found
}

// redactNested is redactValues for the objects inside a value.
func redactNested(v any, marked []string) bool {
	found := false
	switch x := v.(type) {
	case map[string]any:
		found = redactValues(x, marked)
	case []any:
		for _, e := range x {
			found = redactNested(e, marked) || found
		}
	}
	return found
}
