package plan

import "strings"

// redactUserinfo replaces the userinfo of every URL in text s, whatever
// surrounds it (scheme://userinfo@host becomes scheme://<redacted>@host),
// as RedactURL does for one URL: a user name or password a server or an
// error message echoes inside a URL. One pass, linear in s.
func redactUserinfo(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return mapURLs(s, isAuthorityByte, func(authority string) string {
		at := strings.LastIndexByte(authority, '@')
		if at < 0 {
			return authority
		}
		return "://" + Redacted + authority[at:]
	})
}

// mapURLs rewrites every URL of text s from its "://": fix gets each span
// of "://" and the bytes after it that in accepts, and returns its text.
func mapURLs(s string, in func(byte) bool, fix func(span string) string) string {
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		end := i + len("://")
		for end < len(rest) && in(rest[end]) {
			end++
		}
		b.WriteString(rest[:i])
		b.WriteString(fix(rest[i:end]))
		rest = rest[end:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(rest)
	return b.String()
}

// isAuthorityByte reports whether c may stand in a URL's authority
// (RFC 3986 userinfo, host and port: unreserved, percent-encoded,
// sub-delims, ':', '@', '[', ']'), or is part of a non-ASCII character.
func isAuthorityByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c >= 0x80:
		return true
	}
	return strings.IndexByte("-._~%!$&'()*+,;=:@[]", c) >= 0
}

// redactURLQueries replaces the values of the secret query parameters
// (IsSecretParam with marked) of every URL in text s, as RedactURL does
// for one URL: a signed URL (X-Amz-Signature, sig, token) an input file's
// record or a server's reply holds. A URL ends at the first byte that
// cannot stand in one (a quote, a space, a backslash). Linear in s.
func redactURLQueries(s string, marked []string) string {
	if !strings.Contains(s, "?") {
		return s
	}
	return mapURLs(s, isURLByte, func(u string) string { return redactQuery(u, marked) })
}

// isURLByte reports whether c may stand in a URL (RFC 3986's unreserved
// and reserved characters, '%'), or is part of a non-ASCII character.
func isURLByte(c byte) bool {
	return isAuthorityByte(c) || strings.IndexByte("/?#", c) >= 0
}
