package chat

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// secretSafe prints a reply as it streams with every secret redacted as
// the session's plan.Redactor redacts it (as written, URL- and
// JSON-escaped two levels deep, in another case, a prefix of 12
// characters or more, the userinfo and secret query values of a URL),
// also a secret a server echoes split across chunks, however it is cut.
//
// It holds back the end of what it was given until it can no longer be
// the start of a secret: the longest plain form of a secret, less one
// byte; from a backslash on, as much as the longest escaped form (each
// byte of a secret can take escapeFactor bytes of text); a run of text
// holding a URL, up to its end. Of what is before that cut it prints
// only what redacting on its own gives as redacting the whole held text
// does (agreed): no secret crosses the cut. Without secrets, text
// outside a URL is printed at once.
type secretSafe struct {
	out     io.Writer
	red     *plan.Redactor
	plain   int // the longest form of a secret without escapes, in bytes
	escaped int // the longest form under JSON string escapes
	pending string
	wrote   bool
}

// escapeFactor bounds the bytes of text one byte of a secret takes under
// the Redactor's two levels of JSON string escapes: "s" is \u0073 (6
// bytes) at one level, and each of those 6 bytes \u005c, \u0075, ... at
// the next.
const escapeFactor = 6 * 6

func newSecretSafe(out io.Writer, red *plan.Redactor, secrets ...string) *secretSafe {
	p := &secretSafe{out: out, red: red}
	for _, s := range secrets {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		for _, v := range plan.SecretVariants(s) {
			p.plain = max(p.plain, len(v))
		}
	}
	p.escaped = escapeFactor * p.plain
	return p
}

// write takes the next piece of the reply and prints what can no longer
// be part of a secret.
func (p *secretSafe) write(s string) {
	if s == "" {
		return
	}
	p.pending += strings.Clone(s) // s is the decoder's, reused after the call ("" + s would be s itself)
	if cut := p.agreed(p.held()); cut > 0 {
		p.emit(p.red.Redact(p.pending[:cut]))
		p.pending = p.pending[cut:]
	}
}

// held is where the text that may be the start of a secret begins: the
// first byte that is not printed yet.
func (p *secretSafe) held() int {
	n := len(p.pending)
	cut := n - max(p.plain-1, 0)
	if p.plain > 0 {
		// An escaped form that goes on past the end started at most
		// plain-1 bytes before its first backslash, which lies within
		// its length of the end.
		from := max(0, n-p.escaped)
		if k := strings.IndexByte(p.pending[from:], '\\'); k >= 0 {
			cut = min(cut, from+k-(p.plain-1))
		}
	}
	return max(0, min(cut, openURL(p.pending)))
}

// openURL is where the run of text the end of s is part of starts when
// that run may hold a URL not yet whole (a "://", or a ':' or ":/" that s
// ends with), len(s) when it may not: the Redactor hides a URL's
// userinfo and secret query values once it sees it whole, and a run cut
// before its end could be read otherwise (a "://" taken for another
// URL's). A run ends at white space or a control character, as a URL
// does at the latest; a run of more than maxURL bytes is taken for text.
func openURL(s string) int {
	start := strings.LastIndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) + 1
	run := s[start:]
	if len(run) > maxURL || !strings.Contains(run, "://") && !strings.HasSuffix(run, ":") && !strings.HasSuffix(run, ":/") {
		return len(s)
	}
	return start
}

// maxURL bounds the URL held back whole: a signed URL's query fits.
const maxURL = 16 << 10

// agreed moves cut back to a place where printing the held text redacted
// in two parts gives what redacting it whole does (no secret crosses it),
// on a character's start: 1, 2, 4, ... bytes back until one is found, 0
// at worst (all is held until more comes).
func (p *secretSafe) agreed(cut int) int {
	whole := p.red.Redact(p.pending)
	for back := 1; cut > 0; back *= 2 {
		for cut > 0 && cut < len(p.pending) && !utf8.RuneStart(p.pending[cut]) {
			cut--
		}
		head := p.red.Redact(p.pending[:cut])
		if strings.HasPrefix(whole, head) && p.red.Redact(p.pending[cut:]) == whole[len(head):] {
			return cut
		}
		cut -= back
	}
	return 0
}

// flush prints what is held, redacted, and reports whether anything of
// the reply was printed.
func (p *secretSafe) flush() bool {
	if p.pending != "" {
		p.emit(p.red.Redact(p.pending))
		p.pending = ""
	}
	return p.wrote
}

func (p *secretSafe) emit(s string) {
	if s == "" {
		return
	}
	p.wrote = true
	_, _ = io.WriteString(p.out, s) // a failed write is the session's to see (output.go)
}
