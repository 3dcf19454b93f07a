package plan

import "strings"

// CredentialsSent says whether p's requests carry credentials: an API key,
// AWS signing, a header of a secret's name (IsSecretHeader), or a --url's
// user info or secret query parameter. It reads a redacted profile as well
// (a stored run's), whose secrets are markers in their places.
func (p Profile) CredentialsSent() bool {
	if p.APIKey != "" || p.AuthType != "" {
		return true
	}
	for _, h := range p.Header {
		if name, _, _ := strings.Cut(h, ":"); IsSecretHeader(name) {
			return true
		}
	}
	for _, u := range p.URL {
		if _, _, ok := userinfoSpan(u); ok || len(QuerySecrets(u)) > 0 {
			return true
		}
	}
	return false
}
