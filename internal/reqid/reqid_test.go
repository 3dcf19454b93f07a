package reqid

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uuid4 is RFC 9562's canonical form of a version-4 UUID.
var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestUUID: every id is a canonical version-4 UUID, unique, and starts with
// its maker's prefix; two makers have different prefixes.
func TestUUID(t *testing.T) {
	m := New()
	prefix := m.UUID()[:8]
	seen := map[string]bool{}
	for range 10000 {
		id := m.UUID()
		require.Regexp(t, uuid4, id)
		require.False(t, seen[id], "duplicate %s", id)
		seen[id] = true
		assert.Equal(t, prefix, id[:8])
	}
	assert.NotEqual(t, prefix, New().UUID()[:8])
}

// BenchmarkUUID is what an id costs a request.
func BenchmarkUUID(b *testing.B) {
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		_ = m.UUID()
	}
}
