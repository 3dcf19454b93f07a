package plan

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// learnt hides, in every Redactor, the secrets this process learnt while
// running (AddSecrets): they are not the profile's, so no Redactor made
// from it knows them.
var (
	learnt     atomic.Pointer[Redactor]
	learntMu   sync.Mutex
	learntList []string
)

// AddSecrets adds secrets learnt while running (the AWS credentials a
// request is signed with, each time they are read again) to what every
// Redactor of this process hides from then on, those made before included.
func AddSecrets(secrets ...string) {
	learntMu.Lock()
	defer learntMu.Unlock()
	added := false
	for _, s := range secrets {
		if s != "" && !slices.Contains(learntList, s) {
			learntList, added = append(learntList, s), true
		}
	}
	if added {
		learnt.Store(NewRedactor(learntList...))
	}
}

// signatures: HideSignatures was called; signatureRE is an AWS SigV4
// signature as an Authorization header or a presigned URL carries it.
var (
	signatures  atomic.Bool
	signatureRE = regexp.MustCompile(`(Signature=)[0-9a-fA-F]{64}`)
)

// HideSignatures makes every Redactor of this process hide AWS SigV4
// signatures (Signature=<64 hex>, each request's own, so not a secret it
// can list), as a server may echo a signed request's Authorization back.
func HideSignatures() { signatures.Store(true) }

// hideLearnt is s with what this process learnt hidden: the secrets of
// AddSecrets (unless r is their own Redactor) and, after HideSignatures,
// SigV4 signatures.
func hideLearnt(r *Redactor, s string) string {
	if l := learnt.Load(); l != nil && l != r && s != "" {
		s = l.Redact(s)
	}
	if signatures.Load() && strings.Contains(s, "Signature=") {
		s = signatureRE.ReplaceAllString(s, "${1}"+Redacted)
	}
	return s
}

// learntNothing reports whether this process learnt nothing to hide.
func learntNothing() bool { return learnt.Load() == nil && !signatures.Load() }
