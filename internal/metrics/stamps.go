package metrics

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Stamps are a response's arrival times (clock ns, non-decreasing) in
// compact form: the first and the last exactly, each gap between two
// consecutive stamps as a zigzag varint. A 64-chunk stream costs ~150-300
// bytes instead of 512, exactly: no stamp is rounded. It marshals to JSON
// as the array of stamps.
type Stamps struct {
	first, last int64
	n           int
	gaps        []byte
}

// StampsFrom builds the stamps at(0) … at(n-1).
func StampsFrom(n int, at func(i int) int64) Stamps {
	if n <= 0 {
		return Stamps{}
	}
	s := Stamps{first: at(0), last: at(n - 1), n: n}
	if n <= 2 {
		return s // the first and the last are the stamps
	}
	size, prev := 0, s.first
	for i := 1; i < n; i++ {
		t := at(i)
		size += varintLen(t - prev)
		prev = t
	}
	s.gaps = make([]byte, 0, size)
	prev = s.first
	for i := 1; i < n; i++ {
		t := at(i)
		s.gaps = binary.AppendVarint(s.gaps, t-prev)
		prev = t
	}
	return s
}

// StampsOf builds stamps from a list (tests, decoding).
func StampsOf(ts ...int64) Stamps {
	return StampsFrom(len(ts), func(i int) int64 { return ts[i] })
}

func varintLen(v int64) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutVarint(buf[:], v)
}

// Len is the number of stamps.
func (s Stamps) Len() int { return s.n }

// First is the first stamp (0 when there is none).
func (s Stamps) First() int64 { return s.first }

// Last is the last stamp (0 when there is none).
func (s Stamps) Last() int64 { return s.last }

// Gaps calls f with each gap between consecutive stamps, in order: a
// plain loop, for the hot paths that read every gap of every record.
func (s Stamps) Gaps(f func(ns int64)) {
	switch s.n {
	case 0, 1:
		return
	case 2:
		f(s.last - s.first)
		return
	}
	for b := s.gaps; len(b) > 0; {
		g, k := binary.Varint(b)
		if k <= 0 {
			return // cannot happen: StampsFrom wrote them
		}
		b = b[k:]
		f(g)
	}
}

// Second is the second stamp; ok is false with fewer than two.
func (s Stamps) Second() (t int64, ok bool) {
	switch {
	case s.n < 2:
		return 0, false
	case s.n == 2:
		return s.last, true
	}
	g, _ := binary.Varint(s.gaps)
	return s.first + g, true
}

// Slice returns the stamps as a new slice (nil for none).
func (s Stamps) Slice() []int64 {
	if s.n == 0 {
		return nil
	}
	out := make([]int64, 1, s.n)
	out[0] = s.first
	s.Gaps(func(g int64) { out = append(out, out[len(out)-1]+g) })
	return out
}

// MarshalJSON writes the stamps as an array.
func (s Stamps) MarshalJSON() ([]byte, error) {
	if s.n == 0 {
		return []byte("null"), nil
	}
	return json.Marshal(s.Slice())
}

// UnmarshalJSON reads an array of stamps.
func (s *Stamps) UnmarshalJSON(b []byte) error {
	var ts []int64
	if err := json.Unmarshal(b, &ts); err != nil {
		return fmt.Errorf("response stamps: %w", err)
	}
	*s = StampsOf(ts...)
	return nil
}

// IsZero reports whether there are no stamps (JSON omitzero).
func (s Stamps) IsZero() bool { return s.n == 0 }

// Shift returns the stamps moved by d ns (another clock's timebase): the
// gaps are unchanged.
func (s Stamps) Shift(d int64) Stamps {
	if s.n > 0 {
		s.first += d
		s.last += d
	}
	return s
}
