package hooks

import (
	"context"
	"encoding/json"
	"fmt"
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
		"too many":     {slotListing(maxSlots + 1), 200, nil, "the server lists 1025 slots, more than the 1024 a reset erases"},
		"duplicate id": {`[{"id":0},{"id":1},{"id":0}]`, 200, nil, "the answer is malformed: slot 2 repeats the id 0 of an earlier slot"},
		"negative id":  {`[{"id":0},{"id":-1}]`, 200, nil, "the answer is malformed: slot 1 has a negative id (-1)"},
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

// slotListing is a GET /slots answer listing n slots, ids 0 to n-1.
func slotListing(n int) string {
	entries := make([]string, n)
	for i := range entries {
		entries[i] = fmt.Sprintf(`{"id":%d,"n_ctx":4096}`, i)
	}
	return "[" + strings.Join(entries, ",") + "]"
}

// TestSlotIDsBound: a listing of maxSlots slots is accepted whole, in
// order; one more is refused.
func TestSlotIDsBound(t *testing.T) {
	t.Parallel()
	var slots []slot
	require.NoError(t, json.Unmarshal([]byte(slotListing(maxSlots)), &slots))
	ids, err := slotIDs(slots)
	require.NoError(t, err)
	require.Len(t, ids, maxSlots)
	assert.Equal(t, maxSlots-1, ids[maxSlots-1])

	n := maxSlots
	slots = append(slots, slot{ID: &n})
	_, err = slotIDs(slots)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1025 slots, more than the 1024")
}
