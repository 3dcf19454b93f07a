package tokenizer

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// A normalizer is one step of a Hugging Face normalizer, applied to the
// text between added tokens.
type normalizer func(string) string

// normalizers parses a normalizer object into its steps, in order.
func normalizers(n *hfNormalizer) ([]normalizer, error) {
	if n == nil {
		return nil, nil
	}
	switch n.Type {
	case "Sequence":
		var steps []normalizer
		for i := range n.Normalizers {
			s, err := normalizers(&n.Normalizers[i])
			if err != nil {
				return nil, err
			}
			steps = append(steps, s...)
		}
		return steps, nil
	case "NFC", "NFD", "NFKC", "NFKD":
		forms, err := normForms(n)
		if err != nil {
			return nil, err
		}
		return []normalizer{forms[0].String}, nil
	case "Lowercase":
		return []normalizer{lowercase}, nil
	case "StripAccents":
		return []normalizer{stripMarks}, nil
	case "Strip":
		left, right := n.StripLeft == nil || *n.StripLeft, n.StripRight == nil || *n.StripRight
		return []normalizer{func(s string) string {
			if left {
				s = strings.TrimLeftFunc(s, unicode.IsSpace)
			}
			if right {
				s = strings.TrimRightFunc(s, unicode.IsSpace)
			}
			return s
		}}, nil
	case "Prepend":
		prefix := n.Prepend
		return []normalizer{func(s string) string {
			if s == "" {
				return s
			}
			return prefix + s
		}}, nil
	case "Replace":
		return replaceNormalizer(n)
	case "BertNormalizer":
		return []normalizer{bertNormalizer(n)}, nil
	}
	return nil, fmt.Errorf("%w: normalizer type %s (supported: NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Prepend, Replace, BertNormalizer, Sequence)",
		ErrUnsupported, brief(n.Type))
}

func replaceNormalizer(n *hfNormalizer) ([]normalizer, error) {
	content := n.Content
	switch {
	case n.Pattern.String != nil:
		from := *n.Pattern.String
		if from == "" {
			return nil, fmt.Errorf("%w: Replace normalizer with an empty pattern", ErrUnsupported)
		}
		return []normalizer{func(s string) string { return strings.ReplaceAll(s, from, content) }}, nil
	case n.Pattern.Regex != nil:
		re, err := compileRegexp2(*n.Pattern.Regex)
		if err != nil {
			return nil, err
		}
		return []normalizer{func(s string) string {
			var sb strings.Builder
			last := 0
			regexMatches(re, s, func(start, end int) {
				sb.WriteString(s[last:start])
				sb.WriteString(content)
				last = end
			})
			sb.WriteString(s[last:])
			return sb.String()
		}}, nil
	}
	return nil, fmt.Errorf("%w: Replace normalizer without a pattern", ErrUnsupported)
}

// lowercase lowercases each rune on its own, as Rust's char::to_lowercase
// does (no final-sigma rule); İ becomes i and a combining dot above.
func lowercase(s string) string {
	return strings.Map(unicode.ToLower, strings.ReplaceAll(s, "İ", "i\u0307"))
}

// stripMarks drops nonspacing marks (category Mn).
func stripMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

// bertNormalizer is BERT's normalizer: control characters dropped and
// whitespace made a space, spaces around CJK ideographs, accents stripped
// (by default when lowercasing) and lowercase.
func bertNormalizer(n *hfNormalizer) normalizer {
	clean := n.CleanText == nil || *n.CleanText
	chinese := n.HandleChineseChars == nil || *n.HandleChineseChars
	lower := n.Lowercase == nil || *n.Lowercase
	strip := lower
	if n.StripAccents != nil {
		strip = *n.StripAccents
	}
	return func(s string) string {
		if clean || chinese {
			var sb strings.Builder
			sb.Grow(len(s))
			for _, r := range s {
				switch {
				case clean && (r == 0 || r == unicode.ReplacementChar || isControl(r)):
				case clean && unicode.IsSpace(r):
					sb.WriteByte(' ')
				case chinese && isCJK(r):
					sb.WriteByte(' ')
					sb.WriteRune(r)
					sb.WriteByte(' ')
				default:
					sb.WriteRune(r)
				}
			}
			s = sb.String()
		}
		if strip {
			s = stripMarks(norm.NFD.String(s))
		}
		if lower {
			s = lowercase(s)
		}
		return s
	}
}

// isControl is BERT's test for a control character: Unicode's C categories
// but for tab, newline and carriage return.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// isCJK reports whether r is in one of the CJK Unified Ideographs blocks,
// as BERT defines them.
func isCJK(r rune) bool {
	return 0x4E00 <= r && r <= 0x9FFF || 0x3400 <= r && r <= 0x4DBF || 0x20000 <= r && r <= 0x2A6DF ||
		0x2A700 <= r && r <= 0x2B73F || 0x2B740 <= r && r <= 0x2B81F || 0x2B820 <= r && r <= 0x2CEAF ||
		0xF900 <= r && r <= 0xFAFF || 0x2F800 <= r && r <= 0x2FA1F
}
