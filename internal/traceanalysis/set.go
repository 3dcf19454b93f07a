package traceanalysis

// counts is a compact set of 64-bit keys that remembers whether each was
// added once or more than once: open addressing, 8 bytes a slot. A key's
// bit 1 is forced on (so no stored key is 0, the empty slot) and its bit 0
// is the "more than once" mark, so keys that differ only in their two low
// bits are one; keys are hashes, for which that is negligible.
type counts struct {
	slots   []uint64
	n       int // keys
	repeats int // keys added more than once
}

func newCounts() *counts { return &counts{slots: make([]uint64, 1024)} }

// add adds k and reports whether it was there already.
func (c *counts) add(k uint64) bool {
	if 4*(c.n+1) > 3*len(c.slots) {
		c.grow()
	}
	k = k&^3 | 2
	mask := uint64(len(c.slots) - 1)
	for i := k >> 2 & mask; ; i = (i + 1) & mask {
		switch s := c.slots[i]; {
		case s == 0:
			c.slots[i] = k
			c.n++
			return false
		case s&^1 == k:
			if s&1 == 0 {
				c.slots[i] = s | 1
				c.repeats++
			}
			return true
		}
	}
}

// has reports whether k was added.
func (c *counts) has(k uint64) bool { return c.state(k) > 0 }

// repeated reports whether k was added more than once.
func (c *counts) repeated(k uint64) bool { return c.state(k) == 2 }

// state is 0 for a key never added, 1 once, 2 more than once.
func (c *counts) state(k uint64) int {
	k = k&^3 | 2
	mask := uint64(len(c.slots) - 1)
	for i := k >> 2 & mask; ; i = (i + 1) & mask {
		switch s := c.slots[i]; {
		case s == 0:
			return 0
		case s&^1 == k:
			return 1 + int(s&1)
		}
	}
}

func (c *counts) grow() {
	old := c.slots
	c.slots = make([]uint64, 2*len(old))
	mask := uint64(len(c.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := s >> 2 & mask
		for c.slots[i] != 0 {
			i = (i + 1) & mask
		}
		c.slots[i] = s
	}
}
