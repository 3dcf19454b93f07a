package hooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 404 on the default reset route names the --server preset whose routes
// the server answers (read-only GETs, never a flush); an explicit path
// that 404s is the user's choice and is not second-guessed; a preset's
// route that 404s says what that server needs to serve it.
func TestResetNotFoundSuggestsPreset(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		answers string // the one GET route the fake answers
		guessed bool
		missing string // the --server preset's advice (plan.ResetHook.Missing)
		want    string
	}{
		"llama-server":     {"/slots", true, "", "pass --server llamacpp"},
		"sglang":           {"/server_info", true, "", "pass --server sglang"},
		"vllm without dev": {"/version", true, "", "VLLM_SERVER_DEV_MODE=1"},
		"nothing known":    {"/other", true, "", ""},
		"explicit path":    {"/slots", false, "", ""},
		"--server vllm": {"/version", false, "vLLM serves /reset_prefix_cache only when started with VLLM_SERVER_DEV_MODE=1",
			"VLLM_SERVER_DEV_MODE=1"},
	} {
		t.Run(name, func(t *testing.T) {
			var gets atomic.Int32
			// A fake server (named so): 404 on every POST, 200 on one GET route.
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					gets.Add(1)
					if r.URL.Path == c.answers {
						w.Write([]byte(`[]`))
						return
					}
				}
				http.NotFound(w, r)
			}))
			defer srv.Close()
			h := resetHook("/reset_prefix_cache", 0)
			h.Guessed, h.Missing = c.guessed, c.missing
			_, err := New(authHeaders()).Reset(context.Background(), []string{srv.URL}, h)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "404")
			if c.want == "" {
				assert.NotContains(t, err.Error(), "pass --server")
			} else {
				assert.Contains(t, err.Error(), c.want)
			}
			if !c.guessed {
				assert.Zero(t, gets.Load(), "an explicit path is not probed")
			}
		})
	}
}
