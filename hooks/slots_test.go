package hooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A llama.cpp reset lists the slots, then erases each in order; a listing
// that fails, is not an array of slots, or is empty erases nothing and says
// why, with no secret echoed.
func TestResetSlots(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		listing string
		status  int
		erased  []string
		err     string
	}{
		"erases each":  {`[{"id":0},{"id":1},{"id":5}]`, 200, []string{"/slots/0?action=erase", "/slots/1?action=erase", "/slots/5?action=erase"}, ""},
		"no listing":   {`{"error":"slots endpoint is disabled ` + secret + `"}`, 501, nil, "status 501 Not Implemented"},
		"not an array": {`{"id":0}`, 200, nil, "not a JSON array of slots"},
		"no id":        {`[{"n_ctx":4096}]`, 200, nil, "slot 0 of the answer has no id"},
		"no slots":     {`[]`, 200, nil, "lists no slots"},
	} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var erased []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet && r.URL.Path == "/slots" {
					assert.Equal(t, "Bearer "+secret, r.Header.Get("Authorization"))
					w.WriteHeader(c.status)
					w.Write([]byte(c.listing))
					return
				}
				mu.Lock()
				erased = append(erased, r.Method+" "+r.URL.RequestURI())
				mu.Unlock()
			}))
			defer srv.Close()
			h := resetHook("", time.Second)
			h.Slots = true
			calls, err := New(authHeaders()).Reset(context.Background(), []string{srv.URL}, h)
			var want []string
			for _, e := range c.erased {
				want = append(want, "POST "+e)
			}
			assert.Equal(t, want, erased)
			if c.err == "" {
				require.NoError(t, err)
				require.Len(t, calls, len(c.erased))
				assert.Equal(t, c.erased[2], calls[2].Path)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
			assert.Contains(t, err.Error(), "GET "+srv.URL+"/slots")
			assert.NotContains(t, err.Error(), secret)
			require.Len(t, calls, 1)
			assert.False(t, calls[0].OK)
			assert.False(t, strings.Contains(calls[0].Error, secret))
		})
	}
}
