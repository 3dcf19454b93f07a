package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// forgetLearnt undoes AddSecrets and HideSignatures after a test.
func forgetLearnt(t *testing.T) {
	t.Cleanup(func() {
		learntMu.Lock()
		defer learntMu.Unlock()
		learntList = nil
		learnt.Store(nil)
		signatures.Store(false)
	})
}

// Secrets learnt while running are hidden by every Redactor, those made
// before included, and so are SigV4 signatures once asked.
func TestLearntSecrets(t *testing.T) {
	forgetLearnt(t)
	before := NewRedactor("the-api-key")
	var none *Redactor
	assert.True(t, none.Empty())
	AddSecrets("ASIA-refreshed-session-token-1", "")
	AddSecrets("ASIA-refreshed-session-token-2")
	assert.False(t, none.Empty())
	text := `{"echo": "the-api-key ASIA-refreshed-session-token-1 and ASIA-refreshed-session-token-2"}`
	for _, r := range []*Redactor{before, none, NewRedactor()} {
		out := r.Redact(text)
		assert.NotContains(t, out, "ASIA-refreshed", "%v", r)
	}
	assert.NotContains(t, before.Redact(text), "the-api-key")

	sig := "AWS4-HMAC-SHA256 Credential=X/20260101/us-east-1/s/aws4_request, SignedHeaders=host, Signature=" + strings.Repeat("ab", 32)
	assert.Contains(t, none.Redact(sig), strings.Repeat("ab", 32), "not before HideSignatures")
	HideSignatures()
	assert.Equal(t, "AWS4-HMAC-SHA256 Credential=X/20260101/us-east-1/s/aws4_request, SignedHeaders=host, Signature="+Redacted, none.Redact(sig))
}
