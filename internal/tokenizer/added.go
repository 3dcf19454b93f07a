package tokenizer

import (
	"regexp"
	"slices"
	"strings"
)

// addedTokens finds the added tokens of a tokenizer.json (such as <s> or
// <|im_start|>) in a text: Hugging Face matches them before normalization
// and pre-tokenization, as single tokens.
type addedTokens struct {
	// re matches their text, longest first; ids maps that text to its id.
	// Both are nil when there are none.
	re  *regexp.Regexp
	ids map[string]int
}

// newAddedTokens indexes the added tokens by their text; empty ones are
// ignored.
func newAddedTokens(ids map[string]int) addedTokens {
	quoted := make([]string, 0, len(ids))
	for text := range ids {
		if text != "" {
			quoted = append(quoted, regexp.QuoteMeta(text))
		}
	}
	if len(quoted) == 0 {
		return addedTokens{}
	}
	// Go's regexp takes the first alternative that matches, so longest first
	// gives Hugging Face's leftmost-longest matching of added tokens; ties
	// are sorted for a deterministic pattern.
	slices.SortFunc(quoted, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return addedTokens{regexp.MustCompile(strings.Join(quoted, "|")), ids}
}

// split cuts text at the added tokens: text holds no added token calls
// segment with each non-empty stretch between them (atStart tells whether it
// starts the text) and token with the id of each added token, in order.
func (a addedTokens) split(text string, segment func(s string, atStart bool), token func(id int)) {
	if a.re == nil {
		if text != "" {
			segment(text, true)
		}
		return
	}
	last := 0
	for _, m := range a.re.FindAllStringIndex(text, -1) {
		if m[0] > last {
			segment(text[last:m[0]], last == 0)
		}
		token(a.ids[text[m[0]:m[1]]])
		last = m[1]
	}
	if last < len(text) {
		segment(text[last:], last == 0)
	}
}
