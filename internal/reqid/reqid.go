// Package reqid makes the ids a run puts on its requests and sessions, as
// AIPerf does: a version-4 UUID per request (the X-Request-ID header and
// x_request_id in profile_export.jsonl) and per session (X-Correlation-ID,
// x_correlation_id).
//
// A Maker draws the first 32 random bits of its ids once, when it is made
// (one per sending process), and the other 90 from crypto/rand for each id:
// every id is a well-formed random UUID, and a server's log still tells the
// sending processes of a run apart by the ids' first group, as the earlier
// "<prefix>-<n>" ids did.
package reqid

import (
	"crypto/rand"
	"encoding/hex"
)

// Maker makes ids; its methods are safe for concurrent use.
type Maker struct {
	prefix [4]byte
}

// New returns a Maker with a fresh random prefix.
func New() *Maker {
	m := &Maker{}
	_, _ = rand.Read(m.prefix[:]) // never fails (crypto/rand)
	return m
}

// UUID returns a new id: a version-4, RFC 9562 variant UUID in its
// canonical 36-character form.
func (m *Maker) UUID() string {
	var u [16]byte
	copy(u[:4], m.prefix[:])
	_, _ = rand.Read(u[4:]) // never fails (crypto/rand)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant 10
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], u[10:16])
	return string(s[:])
}
