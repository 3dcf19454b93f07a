package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	_ "github.com/mattn/go-sqlite3" // to dump the store's every text column
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/runner"
)

// Secrets of the leak tests, each in a form of its own.
const (
	leakAPIKey    = "sk-apikey-leak-0001"
	leakXAPIKey   = "xak-leak-0002"
	leakCookie    = "ck-leak-0003"
	leakProxyPass = "pxpw-leak-0004"
	leakToken     = "tok-leak-0005" // X-Custom-Token: secret by its name
	leakPin       = "Zq9"           // X-Auth-Pin: shorter than 4 characters
	leakURLPass   = "urlpw-leak-0006"
	leakQueryKey  = "qk-leak-0008" // ?api_key=: secret by its name
	leakQuerySig  = "sg+leak/0009" // ?sig=, URL-escaped on the command line
	leakMarked    = "tn-leak-0010" // ?tenant=, marked by --redact-param
	leakBodyKey   = "bk-leak-0011" // --extra-inputs api_key:
	leakBodyNest  = "bn-leak-0012" // --extra-inputs {"metadata":{"client_secret":…}}
)

var (
	leakProxyAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte("proxyuser:"+leakProxyPass))
	leakURLBasic  = base64.StdEncoding.EncodeToString([]byte("user:" + leakURLPass))
)

// leakHeaders are the -H flags of the leak tests.
func leakHeaders() []string {
	return []string{"-H", "X-Api-Key: " + leakXAPIKey, "-H", "Cookie: session=" + leakCookie + "; theme=dark",
		"-H", "Proxy-Authorization: " + leakProxyAuth, "-H", "X-Custom-Token: " + leakToken, "-H", "X-Auth-Pin: " + leakPin,
		"-H", "X-Trace: visible-0007"}
}

// leakSecrets are the strings that must appear nowhere, with the credential
// Go's client builds from URL userinfo.
func leakSecrets() []string {
	return []string{leakAPIKey, leakXAPIKey, leakCookie, leakProxyPass, strings.TrimPrefix(leakProxyAuth, "Basic "),
		leakToken, leakPin, leakURLPass, leakURLBasic, leakQueryKey, leakQuerySig, url.QueryEscape(leakQuerySig), leakMarked,
		leakBodyKey, leakBodyNest}
}

// leakParams are the flags of the leak tests that put secrets in the query
// of the --url (append leakQuery to it) and in the request body.
func leakParams() []string {
	return []string{"--redact-param", "tenant", "--extra-inputs", "api_key:" + leakBodyKey,
		"--extra-inputs", `{"metadata":{"client_secret":"` + leakBodyNest + `"}}`}
}

// leakQuery is the query of the leak tests' --url.
var leakQuery = "/v1?api_key=" + leakQueryKey + "&sig=" + url.QueryEscape(leakQuerySig) + "&tenant=" + leakMarked

// echoServer is the mock behind a front that echoes the request's secrets
// back in every way a server can: inference requests cycle through a non-2xx
// JSON body, an SSE error frame inside a 200 stream, a status line so broken
// that Go quotes it in its transport error, and a normal answer; each echo
// names one header (or the URL with its password), in turn, so that every
// one fits in a recorded message. The routes in failAdmin answer 500 with
// every secret header in a JSON detail, or (with a "!" prefix) a broken
// status line echoing them all.
type echoServer struct {
	*mockServer
	fullURL   string // the --url with its password, as a proxy might echo it
	failAdmin map[string]bool

	mu sync.Mutex
	n  int
}

func startEchoServer(t *testing.T, failAdmin ...string) *echoServer {
	t.Helper()
	e := &echoServer{failAdmin: map[string]bool{}}
	for _, p := range failAdmin {
		e.failAdmin[p] = true
	}
	e.mockServer = startWrappedMock(t, mock.Config{Fast: true}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.serve(next, w, r) })
	})
	e.fullURL = strings.Replace(e.URL, "http://", "http://user:"+leakURLPass+"@", 1)
	return e
}

// echoes lists what a server may echo of r, one item per secret: its
// secret headers, its URL with the query, and the body's secret fields.
func (e *echoServer) echoes(r *http.Request) []string {
	var out []string
	for name, vs := range r.Header {
		if plan.IsSecretHeader(name) {
			out = append(out, name+": "+strings.Join(vs, ","))
		}
	}
	sort.Strings(out)
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var fields struct {
		APIKey   string `json:"api_key"`
		Metadata struct {
			ClientSecret string `json:"client_secret"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &fields) == nil && fields.APIKey != "" {
		out = append(out, "body api_key "+fields.APIKey+" and client_secret "+fields.Metadata.ClientSecret)
	}
	return append(out, "upstream "+e.fullURL+r.URL.RequestURI()+" failed")
}

func (e *echoServer) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	echoes := e.echoes(r)
	if !strings.HasPrefix(r.URL.Path, "/v1/") {
		switch {
		case e.failAdmin["!"+r.URL.Path]:
			brokenStatusLine(w, strings.Join(echoes, ";"))
		case e.failAdmin[r.URL.Path]:
			b, _ := json.Marshal(map[string]string{"detail": strings.Join(echoes[:len(echoes)-1], "; ")})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(b)
		default:
			next.ServeHTTP(w, r)
		}
		return
	}
	e.mu.Lock()
	i := e.n
	e.n++
	e.mu.Unlock()
	echo := echoes[(i/4)%len(echoes)]
	switch i % 4 {
	case 0:
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "rejected: " + echo, "code": 401}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write(b)
	case 1:
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "stream failed: " + echo, "code": 500}})
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", b)
	case 2:
		brokenStatusLine(w, echo)
	default:
		next.ServeHTTP(w, r)
	}
}

// brokenStatusLine answers with a status line without a space: Go's client
// fails with `malformed HTTP response "<the line>"`.
func brokenStatusLine(w http.ResponseWriter, echo string) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = buf.WriteString(strings.ReplaceAll("ECHO:"+echo, " ", "_") + "\r\n\r\n")
	_ = buf.Flush()
}

// assertNoLeak checks every file under dir (exports, JSONL, logs, results,
// the store and its WAL) and the given output for every secret, and every
// text column of the store in dir.
func assertNoLeak(t *testing.T, dir string, outputs ...string) {
	t.Helper()
	for i, out := range outputs {
		for _, s := range leakSecrets() {
			assert.NotContains(t, out, s, "output %d", i)
		}
	}
	var files []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files = append(files, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range leakSecrets() {
			if s == leakPin && strings.HasPrefix(filepath.Base(path), "aiperf.db") {
				continue // three bytes may occur in binary pages by chance: checked column by column below
			}
			assert.False(t, bytes.Contains(b, []byte(s)), "%s holds %q", path, s)
		}
		return nil
	}))
	require.NotEmpty(t, files)
	assert.NoFileExists(t, filepath.Join(dir, runner.SpecFile))

	db, err := sql.Open("sqlite3", filepath.Join(dir, "aiperf.db")+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	tables, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	require.NoError(t, err)
	var names []string
	for tables.Next() {
		var n string
		require.NoError(t, tables.Scan(&n))
		names = append(names, n)
	}
	require.NoError(t, tables.Err())
	tables.Close()
	texts := 0
	for _, table := range names {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			for i, v := range vals {
				var s string
				switch x := v.(type) {
				case string:
					s = x
				case []byte:
					s = string(x)
				default:
					continue
				}
				texts++
				for _, secret := range leakSecrets() {
					assert.NotContains(t, s, secret, "%s.%s", table, cols[i])
				}
			}
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	assert.NotZero(t, texts)
}

// TestSecretsNeverLeak: a server that echoes every secret the client sends
// (API key, X-Api-Key, cookie, proxy credentials, headers secret by name, a
// short one, the URL's password) in error bodies, SSE error frames,
// transport errors and control-hook replies never gets one into stdout,
// stderr, an export, the JSONL, the store or `runs show`.
func TestSecretsNeverLeak(t *testing.T) {
	e := startEchoServer(t, "!/stop_profile")
	dir := t.TempDir()
	args := append(quick(e.fullURL+leakQuery, "--api-key", leakAPIKey, "--request-count", "40", "--reset-kv-cache", "--server-profiler",
		"--artifact-dir", "out", "-v", "--ui", "simple"), append(leakHeaders(), leakParams()...)...)
	inv := cli(t, dir, args...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)

	// The echoes were recorded, redacted: the test saw what it meant to.
	jsonl, err := os.ReadFile(filepath.Join(dir, "out", "profile_export.jsonl"))
	require.NoError(t, err)
	for _, want := range []string{"rejected: Authorization: " + plan.Redacted, "stream failed: X-Api-Key: " + plan.Redacted,
		"malformed HTTP response", "X-Auth-Pin:_" + plan.Redacted, "upstream http://" + plan.Redacted + "@",
		"/v1/chat/completions?api_key=" + plan.Redacted + "&sig=" + plan.Redacted + "&tenant=" + plan.Redacted,
		"body api_key " + plan.Redacted + " and client_secret " + plan.Redacted} {
		assert.Contains(t, string(jsonl), want)
	}
	assert.Contains(t, inv.stderr, "profiler_stop POST", "the failed stop is logged")
	assert.Contains(t, inv.stderr, "X-Api-Key:_"+plan.Redacted)
	exported, err := os.ReadFile(filepath.Join(dir, "out", "profile_export_aiperf.json"))
	require.NoError(t, err)
	assert.Contains(t, string(exported), "X-Trace: visible-0007", "a header that is not secret stays visible")
	assert.Contains(t, string(exported), "/v1?api_key="+plan.Redacted+"&sig="+plan.Redacted+"&tenant="+plan.Redacted,
		"the URL keeps its query, without the secrets")
	assert.Contains(t, string(exported), "api_key:"+plan.Redacted)
	// The URL's user name ("user") is hidden in every URL, not in every
	// word it spells: the chat role stays.
	inputs, err := os.ReadFile(filepath.Join(dir, "out", "inputs.json"))
	require.NoError(t, err)
	assert.Contains(t, string(inputs), `"role":"user"`)
	assert.NotContains(t, string(inputs), `"role":"`+plan.Redacted)
	for _, out := range []string{inv.stdout, inv.stderr, string(jsonl), string(exported)} {
		assert.NotContains(t, out, "://user")
	}

	show := cli(t, dir, "runs", "show", "1", "--format", "json")
	require.Equal(t, ExitOK, show.code, show.stderr)
	export := cli(t, dir, "runs", "export", "1", "--format", "json", "-o", filepath.Join(dir, "re-export"))
	require.Equal(t, ExitOK, export.code, export.stderr)
	assertNoLeak(t, dir, inv.stdout, inv.stderr, show.stdout, show.stderr, export.stdout, export.stderr)
}

// TestSweepSecretsNeverLeak: the same for sweep trials: the child's log
// (aiperf.log), its result.json and exports, the parent's output and the
// store; one trial's reset fails with the echo, another's profiler stop. Go's
// client sends the URL's userinfo as Basic credentials, which are echoed too.
func TestSweepSecretsNeverLeak(t *testing.T) {
	subprocesses(t)
	e := startEchoServer(t, "/flush_cache", "/stop_profile")
	dir := t.TempDir()
	var hdrs []string
	for i := 1; i < len(leakHeaders()); i += 2 {
		hdrs = append(hdrs, leakHeaders()[i])
	}
	hb, err := json.Marshal(hdrs)
	require.NoError(t, err)
	// The script holds the headers: it lives outside the checked tree.
	script := writeFile(t, t.TempDir(), "leak.star", smallBase+`
leaky = base.replace(header = `+string(hb)+`, request_count = 32, reset_kv_cache = True, server_profiler = True,
    redact_param = ["tenant"], extra_inputs = ["api_key:`+leakBodyKey+`", '{"metadata":{"client_secret":"`+leakBodyNest+`"}}'])
sweep(name = "leak", base = leaky, scenarios = [
    {"name": "stop-fails"},
    {"name": "reset-fails", "reset_kv_cache_path": "/flush_cache"},
])
`)
	inv := cli(t, dir, "sweep", script, "--set", "url="+e.fullURL+leakQuery, "--set", "tok="+tinyTokenizer(t))
	require.Equal(t, ExitSomeFailed, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Contains(t, inv.stderr, "reset-fails trial 1: reset kv cache", "the failed reset is reported")
	assert.Contains(t, inv.stderr, "status 500 Internal Server Error: Authorization: Basic "+plan.Redacted+"; Cookie: "+plan.Redacted,
		"with the server's words, redacted (the hook sends the URL's user as the inference requests do)")

	trial := filepath.Join(dir, "artifacts", "leak", "stop-fails", "trial_0001")
	log, err := os.ReadFile(filepath.Join(trial, runner.LogFile))
	require.NoError(t, err)
	assert.Contains(t, string(log), "profiler_stop POST")
	assert.Contains(t, string(log), "Cookie: "+plan.Redacted)
	scanner := bufio.NewScanner(bytes.NewReader(log))
	for scanner.Scan() {
		assert.NotContains(t, scanner.Text(), leakPin)
	}
	assert.FileExists(t, filepath.Join(trial, runner.ResultFile))
	jsonl, err := os.ReadFile(filepath.Join(trial, "profile_export.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(jsonl), "rejected: Authorization: Basic "+plan.Redacted, "the Basic credential built from the URL was echoed")
	assert.Contains(t, string(jsonl), "?api_key="+plan.Redacted+"&sig="+plan.Redacted+"&tenant="+plan.Redacted, "the query was echoed")
	assert.Contains(t, string(jsonl), "body api_key "+plan.Redacted+" and client_secret "+plan.Redacted, "the body was echoed")
	assertNoLeak(t, dir, inv.stdout, inv.stderr)
}
