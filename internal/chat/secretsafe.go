package chat

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// secretSafe prints a reply as it streams with every secret redacted,
// also one a server echoes split across chunks: it holds back the last
// hold bytes of what it was given (the longest form of a secret, less
// one) until more comes or the reply ends, and never cuts through a form
// of a secret, so each is whole in the text it redacts before printing.
// Without secrets it prints at once.
type secretSafe struct {
	out     io.Writer
	red     *plan.Redactor
	forms   []string // the forms of the secrets a reply's text may hold
	hold    int
	pending string
	wrote   bool
}

func newSecretSafe(out io.Writer, red *plan.Redactor, secrets ...string) *secretSafe {
	p := &secretSafe{out: out, red: red}
	for _, s := range secrets {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s), jsonEscaped(s)} {
			p.forms = append(p.forms, v)
			p.hold = max(p.hold, len(v)-1)
		}
	}
	return p
}

// jsonEscaped is s as a JSON string's contents.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// write takes the next piece of the reply and prints what can no longer
// be part of a secret.
func (p *secretSafe) write(s string) {
	if s == "" {
		return
	}
	if p.hold == 0 {
		p.emit(s)
		return
	}
	p.pending += strings.Clone(s) // s is the decoder's, reused after the call ("" + s would be s itself)
	cut := len(p.pending) - p.hold
	for cut > 0 && !utf8.RuneStart(p.pending[cut]) {
		cut--
	}
	if cut = p.pastSecrets(cut); cut > 0 {
		p.emit(p.red.Redact(p.pending[:cut]))
		p.pending = p.pending[cut:]
	}
}

// pastSecrets moves cut to the end of every form of a secret that starts
// before it and ends after it (held whole: pending holds hold bytes past
// cut).
func (p *secretSafe) pastSecrets(cut int) int {
	for moved := true; moved && cut > 0; {
		moved = false
		for _, f := range p.forms {
			from, to := max(0, cut-len(f)+1), min(len(p.pending), cut+len(f)-1)
			if from >= cut || to <= from {
				continue
			}
			if i := strings.Index(p.pending[from:to], f); i >= 0 {
				cut, moved = from+i+len(f), true
			}
		}
	}
	return cut
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
	_, _ = io.WriteString(p.out, s) // a reader gone away loses the text, not the turn
}
