package mock

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// admitKey answers 401 and reports false when r lacks the --api-key.
func (s *Server) admitKey(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	if s.authorized(r) {
		return true
	}
	x.fail(w, http.StatusUnauthorized, "invalid_request_error", "missing or invalid API key (send Authorization: Bearer <key> or X-Api-Key: <key>)")
	return false
}

// authorized reports whether r carries the --api-key (always true without one).
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok { // Anthropic's scheme
		token, ok = r.Header.Get("X-Api-Key"), r.Header.Get("X-Api-Key") != ""
	}
	return ok && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.APIKey)) == 1
}
