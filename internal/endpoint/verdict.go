package endpoint

import (
	"fmt"
	"net/http"
)

// otherChoices tallies the output that arrived on choices other than
// choice 0, the one measured.
type otherChoices struct {
	first  int // the first such choice's index
	chunks int // events (or bodies) that carried some
}

// add notes p's other choice, if it has one.
func (o *otherChoices) add(p *piece) {
	if !p.hasOther {
		return
	}
	if o.chunks == 0 {
		o.first = p.other
	}
	o.chunks++
}

// verdict has the last word on a response read without an error. Text
// that arrived only on choices other than choice 0 makes it an invalid
// response: aiperf asks for one choice and measures choice 0, so a success
// without that text would report an OSL of 0. Usage that counts fewer
// completion tokens than the chunks of generated text that arrived (each
// holds a token at least: a stale count from mid-stream, or a made-up one)
// is not trusted: the client's count stands in for it.
func (c *Client) verdict(res *Response, h http.Header, f format) {
	if res.Err != nil {
		return
	}
	if o := res.others; len(res.Chunks) == 0 && o.chunks > 0 {
		res.Err = c.invalid(res.Status, h, f, fmt.Sprintf(
			"generated text arrived only on choice %d (%d chunk(s)), none on choice 0, the one aiperf measures", o.first, o.chunks))
		return
	}
	if u := res.Usage; u.Trusted() && u.CompletionTokens < len(res.Chunks) {
		u.Untrusted = fmt.Sprintf("%s is %d, fewer than the %d chunk(s) of generated text that arrived", u.CompletionField(), u.CompletionTokens, len(res.Chunks))
	}
}
