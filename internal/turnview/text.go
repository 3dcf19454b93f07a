package turnview

import (
	"crypto/sha256"
	"hash"
)

// text is a sink that keeps the first limit characters (code points, as
// AIPerf counts them) of what it is given, counts them all and, for a
// message, digests them all: two bodies are the same message when their
// digests are, however much of them was kept.
type text struct {
	limit int
	kept  []byte
	runes int       // characters given
	full  bool      // more than limit were given
	sum   hash.Hash // nil: no digest
}

func newText(limit int, digest bool) *text {
	t := &text{limit: limit}
	if digest {
		t.sum = sha256.New()
	}
	return t
}

// reset empties t for the next value.
func (t *text) reset() {
	t.kept, t.runes, t.full = t.kept[:0], 0, false
	if t.sum != nil {
		t.sum.Reset()
	}
}

func (t *text) write(p []byte) {
	if t.sum != nil {
		t.sum.Write(p)
	}
	keep := len(p)
	for i, b := range p {
		if b&0xc0 == 0x80 { // a continuation byte: part of the character before
			continue
		}
		if t.runes++; t.runes == t.limit+1 {
			keep = i
		}
	}
	if !t.full {
		t.kept = append(t.kept, p[:keep]...)
		t.full = keep < len(p)
	}
}

func (t *text) writeString(s string) { t.write([]byte(s)) }

// String is the text kept.
func (t *text) String() string { return string(t.kept) }

// cut is how many characters were given beyond the limit.
func (t *text) cut() int { return max(0, t.runes-t.limit) }

// digest appends t's digest to b.
func (t *text) digest(b []byte) []byte { return t.sum.Sum(b) }
