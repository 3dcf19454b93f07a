package plan

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hookPathFlags set each control-hook route of a profile.
var hookPathFlags = map[string]func(p *Profile, path string){
	"--reset-kv-cache-path":        func(p *Profile, path string) { p.ResetKVCachePath = []string{"/ok", path} },
	"--server-profiler-start-path": func(p *Profile, path string) { p.ServerProfilerStartPath = path },
	"--server-profiler-stop-path":  func(p *Profile, path string) { p.ServerProfilerStopPath = path },
}

// TestHookPathUnsendable: a route that could never be sent as written (an
// invalid percent escape, a control character, a fragment, a query no
// request line can carry) is refused for every hook, naming the flag, on one line, its
// secret query values redacted.
func TestHookPathUnsendable(t *testing.T) {
	cases := []struct {
		name, path, want string
	}{
		{"invalid escape", "/a%zz", `has an invalid percent escape ("%zz"): write a literal % as %25, got "/a%zz"`},
		{"truncated escape", "/flush%2", `has an invalid percent escape ("%2")`},
		{"lone percent", "/flush%", `has an invalid percent escape ("%")`},
		{"DEL", "/a\x7f", `holds a control character ("\x7f"), which no request line can carry: remove it, or write it percent-encoded (%7F), got "/a\x7f"`},
		{"CR LF", "/a\r\nX-Injected: 1", `holds a control character ("\r")`},
		{"LF", "/a\nb", `holds a control character ("\n")`},
		{"NUL", "/a\x00", `holds a control character ("\x00")`},
		{"tab", "/a\tb", `holds a control character ("\t")`},
		{"escape in the query", "/flush?timeout=%zz", `has a query with an invalid percent escape ("%zz")`},
		{"space in the query", "/flush?a=b c", `has a query holding a space or control character`},
		{"fragment", "/flush#now", `holds a '#', where a URL's fragment starts: what follows it is never sent; write it percent-encoded (%23)`},
		{"fragment in the query", "/flush?timeout=30#x", `holds a '#'`},
	}
	for flag, set := range hookPathFlags {
		for _, tc := range cases {
			t.Run(flag+" "+tc.name, func(t *testing.T) {
				p := valid()
				set(&p, tc.path)
				err := p.Check()
				require.Error(t, err)
				fes := FieldErrors(err)
				require.Len(t, fes, 1, err.Error())
				msg := fes[0].Error()
				assert.True(t, strings.HasPrefix(msg, flag+" "), msg)
				assert.Contains(t, msg, tc.want)
				assert.False(t, strings.ContainsFunc(msg, isURLControl), "one line, no raw control character: %q", msg)
			})
		}
	}
}

// TestHookPathEmpty: --reset-kv-cache-path= (a list entry given empty) is
// refused rather than POSTed to the bare origin; an empty profiler path
// cannot be told from one not given (a plain string) and falls back to the
// default route, never to the bare origin.
func TestHookPathEmpty(t *testing.T) {
	p := valid()
	p.ResetKVCachePath = []string{""}
	err := p.Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--reset-kv-cache-path must not be empty: give a route starting with '/'")

	p = valid()
	p.ServerProfiler, p.ServerProfilerStartPath, p.ServerProfilerStopPath = true, "", ""
	require.NoError(t, p.Check())
	h := p.ProfilerHook()
	assert.Equal(t, DefaultProfilerStartPath, h.StartPath)
	assert.Equal(t, DefaultProfilerStopPath, h.StopPath)
}

// TestHookPathSendable: the routes that can be sent pass, and are what an
// HTTP request for them carries.
func TestHookPathSendable(t *testing.T) {
	for _, path := range []string{"/reset_prefix_cache", "/flush_cache?timeout=30", "/a%20b", "/slots/0?action=erase",
		"/a b", "/x?token=%2Fabc&y=", "//double"} {
		t.Run(path, func(t *testing.T) {
			require.NoError(t, CheckHookPath(path))
			for flag, set := range hookPathFlags {
				p := valid()
				set(&p, path)
				assert.NoError(t, p.Check(), flag)
			}
			_, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:8000"+path, http.NoBody)
			assert.NoError(t, err)
		})
	}
}

// TestHookPathErrorRedactsSecrets: a refused path's query credential is not
// shown, whatever is wrong with the path.
func TestHookPathErrorRedactsSecrets(t *testing.T) {
	for _, path := range []string{"/r?token=TOKSECRET1&x=%zz", "/r\n?token=TOKSECRET1", "r?token=TOKSECRET1"} {
		p := valid()
		p.ResetKVCachePath = []string{path}
		err := p.Check()
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "TOKSECRET1")
		assert.Contains(t, err.Error(), "token="+Redacted)
	}
	p := valid()
	p.RedactParam = []string{"tenant"}
	p.ServerProfilerStopPath = "/stop?tenant=TENSECRET2&a=%z"
	err := p.Check()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "TENSECRET2", "--redact-param names are redacted too")
}

// TestHookTimeoutTooSmall: a positive timeout that rounds to less than
// 1 ms (to no time at all, which meant no timeout) is refused, naming the
// flag and the smallest value accepted.
func TestHookTimeoutTooSmall(t *testing.T) {
	fields := map[string]func(p *Profile, x float64){
		"--reset-kv-cache-timeout-seconds":  func(p *Profile, x float64) { p.ResetKVCacheTimeoutSeconds = &x },
		"--server-profiler-timeout-seconds": func(p *Profile, x float64) { p.ServerProfilerTimeoutSeconds = &x },
	}
	for flag, set := range fields {
		for _, x := range []float64{1e-10, 1e-300, 5e-324, 0.000999} {
			p := valid()
			set(&p, x)
			fes := FieldErrors(p.Check())
			require.Len(t, fes, 1, flag)
			assert.Contains(t, fes[0].Error(), flag+" must be at least 0.001 (1ms): a shorter timeout rounds to none, got ")
		}
		for _, x := range []float64{0.001, 0.5, 30, MaxSeconds} {
			p := valid()
			set(&p, x)
			assert.NoError(t, p.Check(), "%s %g", flag, x)
		}
		p := valid()
		set(&p, 0)
		fes := FieldErrors(p.Check())
		require.Len(t, fes, 1, "0 is refused once, as before")
		assert.Contains(t, fes[0].Error(), "must be greater than 0, got 0")
	}
	p := valid()
	p.ResetKVCacheTimeoutSeconds = Ptr(0.001)
	assert.Equal(t, MinHookTimeout, p.ResetHook().Timeout, "the smallest accepted timeout is a real one")
}
