package servermetrics

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"strings"
)

// DefaultMaxSeries is Options.MaxSeries when 0: the series an endpoint's
// scrapes keep, counted as Prometheus counts them (a histogram's series is
// one per bucket, plus its sum and count). A vLLM server exposes about a
// thousand, a DCGM exporter of eight GPUs a few hundred; an exporter with a
// label per request or per user can expose millions, which would cost
// seconds of parsing and hundreds of megabytes a scrape.
const DefaultMaxSeries = 20_000

// capSeries cuts body so that the parser sees at most max of its series
// (sample lines), never half of a histogram's or summary's, and counts the
// series of the whole body when there are more (total is 0 otherwise). The
// body is read line by line without parsing values. The lines of one
// histogram or summary are those whose family (the name of their # TYPE
// line, for its _bucket, _sum, _count and _created lines) and labels (le
// and quantile aside) are those of the line before: the text format keeps
// them together.
func capSeries(body []byte, max int, seed maphash.Seed) (kept []byte, total int) {
	var (
		fam     []byte // the family of the last # TYPE line
		grouped bool   // that family is a histogram or summary
		prev    uint64
		group   int // where the lines of the last one begin
		h       maphash.Hash
	)
	h.SetSeed(seed)
	kept = body
	for off := 0; off < len(body); {
		start := off
		var line []byte
		line, off = nextLine(body, off)
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0:
			continue
		case line[0] == '#':
			if f := bytes.Fields(line); len(f) >= 4 && string(f[1]) == "TYPE" {
				fam = append(fam[:0], f[2]...)
				kind := string(f[3])
				grouped = kind == "histogram" || kind == "summary" || kind == "gaugehistogram"
			}
			continue
		}
		total++
		if total > max+1 {
			continue // past the cut: only counted
		}
		h.Reset()
		seriesKey(&h, line, fam, grouped)
		if k := h.Sum64(); total == 1 || k != prev {
			prev, group = k, start
		}
		if total == max+1 {
			kept = body[:group]
		}
	}
	if total <= max {
		total = 0
	}
	return kept, total
}

// nextLine is the line of body that begins at off, without its newline,
// and where the next one begins.
func nextLine(body []byte, off int) (line []byte, next int) {
	end := bytes.IndexByte(body[off:], '\n')
	if end < 0 {
		return body[off:], len(body)
	}
	return body[off : off+end], off + end + 1
}

// groupedSuffixes are the lines of a histogram's or summary's family.
var groupedSuffixes = []string{"", "_bucket", "_sum", "_count", "_created", "_gcount", "_gsum"}

// seriesKey hashes what names a sample line's series: its metric name (its
// family's, for a line of a grouped family) and its label pairs but le and
// quantile.
func seriesKey(h *maphash.Hash, line, fam []byte, grouped bool) {
	i := bytes.IndexAny(line, "{ \t")
	if i < 0 {
		i = len(line)
	}
	name := line[:i]
	if grouped && bytes.HasPrefix(name, fam) {
		for _, suffix := range groupedSuffixes {
			if len(name) == len(fam)+len(suffix) && string(name[len(fam):]) == suffix {
				name = fam
				break
			}
		}
	}
	h.Write(name)
	if i == len(line) || line[i] != '{' {
		return
	}
	rest := line[i+1:]
	for {
		rest = bytes.TrimLeft(rest, " \t,")
		if len(rest) == 0 || rest[0] == '}' {
			return
		}
		label, value, tail, ok := labelPair(rest)
		if !ok { // malformed: the parser will say so; key on all of it
			h.Write(rest)
			return
		}
		if !grouped || (string(label) != "le" && string(label) != "quantile") {
			h.WriteByte(0)
			h.Write(label)
			h.WriteByte(1)
			h.Write(value)
		}
		rest = tail
	}
}

// labelPair reads name="value" (or a quoted name alone, OpenMetrics 2's
// metric name in braces) from the start of s.
func labelPair(s []byte) (name, value, rest []byte, ok bool) {
	if s[0] == '"' {
		q, n := quoted(s)
		if n < 0 {
			return nil, nil, nil, false
		}
		name, s = q, s[n:]
	} else {
		eq := bytes.IndexByte(s, '=')
		if eq < 0 {
			return nil, nil, nil, false
		}
		name, s = bytes.TrimSpace(s[:eq]), s[eq:]
	}
	s = bytes.TrimLeft(s, " \t")
	if len(s) == 0 || s[0] != '=' {
		return name, nil, s, true
	}
	s = bytes.TrimLeft(s[1:], " \t")
	if len(s) == 0 || s[0] != '"' {
		return nil, nil, nil, false
	}
	value, n := quoted(s)
	if n < 0 {
		return nil, nil, nil, false
	}
	return name, value, s[n:], true
}

// quoted is the content of the quoted string at the start of s (escapes
// kept) and the bytes it takes; n < 0 when it is not closed.
func quoted(s []byte) (content []byte, n int) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[1:i], i + 1
		}
	}
	return nil, -1
}

// seriesCap is what an endpoint's series cap did: the largest scrape's
// series count when it was over the cap, and the new series dropped once
// the endpoint kept max distinct ones.
type seriesCap struct {
	largest int
	churned int
	warned  bool
}

// note is the warning a capped endpoint gives at the end ("" when none).
func (c seriesCap) note(max int) string {
	var parts []string
	if c.largest > 0 {
		parts = append(parts, fmt.Sprintf("its largest scrape held %d series, more than the %d kept (--server-metrics-max-series): the others were dropped", c.largest, max))
	}
	if c.churned > 0 {
		parts = append(parts, fmt.Sprintf("its series changed from scrape to scrape: after %d distinct ones (--server-metrics-max-series), new ones were dropped (%d samples)", max, c.churned))
	}
	return strings.Join(parts, "; ")
}
