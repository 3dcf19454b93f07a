package servermetrics

import (
	"bytes"
	"strings"
)

// omText rewrites an OpenMetrics 1.0 exposition as the Prometheus text
// format (0.0.4), for expfmt's text parser, in one pass over its lines:
// both are linear in the body. expfmt's own OpenMetrics parser is not: it
// matches each line against the format's ABNF grammar with a generic
// parser (go-abnf's parse forest), whose cost grows faster than the line:
// 2.1 s for a 60 KiB body, minutes for 500 lines with 1,000-byte labels.
// What OpenMetrics has and the text format has not is dealt with so:
//   - # EOF ends the exposition; # UNIT lines stay, comments to the text
//     parser;
//   - a counter's samples are named with _total: a counter fam's fam_total
//     is renamed fam (the name of its family), and totals lists fam, whose
//     family the caller names fam_total, as expfmt's OpenMetrics parser
//     does; the _created samples of counters, histograms and summaries (a
//     creation time, which the timeline drops too) are left out;
//   - the type unknown is the text format's untyped; info, stateset and
//     gaugehistogram, which the text format has not and the timeline does
//     not reduce, are left out with their samples;
//   - a sample's timestamp (seconds, a float, where the text format has
//     milliseconds) and its exemplar are cut: nothing here reads them.
//
// A line it does not understand is kept as it is, for the text parser to
// refuse.
func omText(body []byte) (text []byte, totals map[string]bool) {
	out := make([]byte, 0, len(body))
	types := map[string]string{}
	var cur string // the family of the last descriptor
	for off := 0; off < len(body); {
		var line []byte
		line, off = nextLine(body, off)
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] == '#' {
			kind, name, typ := descriptor(line)
			switch kind {
			case "EOF":
				return out, totals
			case "TYPE":
				types[name] = typ
				if typ == "unknown" {
					line = append(line[:len(line)-len(typ):len(line)-len(typ)], "untyped"...)
				}
				fallthrough
			case "HELP", "UNIT":
				cur = name
				if unreduced(types[name]) {
					continue
				}
			}
			out = append(append(out, line...), '\n')
			continue
		}
		name, from, to := sampleName(line)
		typ := types[cur]
		switch {
		case unreduced(typ) && strings.HasPrefix(name, cur):
			continue
		case name == cur+"_created" && (typ == "counter" || typ == "histogram" || typ == "summary"):
			continue
		case typ == "counter" && name == cur+"_total":
			if totals == nil {
				totals = map[string]bool{}
			}
			totals[cur] = true
			out = append(append(append(out, line[:from]...), cur...), line[to:valueEnd(line, to)]...)
		default:
			out = append(out, line[:valueEnd(line, to)]...)
		}
		out = append(out, '\n')
	}
	return out, totals
}

// unreduced reports whether an OpenMetrics type has no text-format
// counterpart and is left out.
func unreduced(typ string) bool {
	return typ == "info" || typ == "stateset" || typ == "gaugehistogram"
}

// descriptor reads a # line: its keyword (TYPE, HELP, UNIT, EOF, or a
// comment's first word), the family it names (a quoted name's bytes
// between the quotes) and, for TYPE, the type.
func descriptor(line []byte) (kind, name, typ string) {
	rest := bytes.TrimLeft(line[1:], " \t")
	i := bytes.IndexAny(rest, " \t")
	if i < 0 {
		return string(rest), "", ""
	}
	kind, rest = string(rest[:i]), bytes.TrimLeft(rest[i:], " \t")
	j := bytes.IndexAny(rest, " \t")
	switch {
	case len(rest) > 0 && rest[0] == '"':
		if j = quoteEnd(rest, 0); j < 0 {
			return kind, "", ""
		}
		name, rest = string(rest[1:j-1]), rest[j:]
	case j >= 0:
		name, rest = string(rest[:j]), rest[j:]
	default:
		name, rest = string(rest), nil
	}
	return kind, name, string(bytes.TrimSpace(rest))
}

// sampleName finds a sample line's metric name: line[from:to] (between the
// quotes of a quoted name that opens the braces), "" when none is found
// there.
func sampleName(line []byte) (name string, from, to int) {
	if line[0] != '{' {
		to = bytes.IndexAny(line, "{ \t")
		if to < 0 {
			to = len(line)
		}
		return string(line[:to]), 0, to
	}
	i := skipBlank(line, 1)
	if i == len(line) || line[i] != '"' {
		return "", 0, 0
	}
	j := quoteEnd(line, i)
	if j < 0 {
		return "", 0, 0
	}
	if k := skipBlank(line, j); k < len(line) && (line[k] == ',' || line[k] == '}') {
		return string(line[i+1 : j-1]), i + 1, j - 1
	}
	return "", 0, 0
}

// valueEnd is where a sample line's value ends, its metric name ending
// at to: what follows, a timestamp or an exemplar, is cut. A line it
// cannot read ends where it ends.
func valueEnd(line []byte, to int) int {
	i := skipBlank(line, to)
	switch {
	case line[0] == '{':
		i = labelsEnd(line, 0)
	case i < len(line) && line[i] == '{':
		i = labelsEnd(line, i)
	}
	if i < 0 {
		return len(line)
	}
	i = skipBlank(line, i)
	for i < len(line) && line[i] != ' ' && line[i] != '\t' {
		i++
	}
	return i
}

// skipBlank is the index of the first byte from i that is no space or tab.
func skipBlank(line []byte, i int) int {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

// labelsEnd is the index after the } closing the braces that open at
// line[open], quoted strings skipped, or −1.
func labelsEnd(line []byte, open int) int {
	for i := open + 1; i < len(line); i++ {
		switch line[i] {
		case '"':
			if i = quoteEnd(line, i) - 1; i < 0 {
				return -1
			}
		case '}':
			return i + 1
		}
	}
	return -1
}

// quoteEnd is the index after the quote that closes the quoted string
// opening at line[open] (escapes skipped), or −1 when none does.
func quoteEnd(line []byte, open int) int {
	if _, n := quoted(line[open:]); n >= 0 {
		return open + n
	}
	return -1
}
