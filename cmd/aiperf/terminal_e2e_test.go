package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// evil is what a hostile server or store name carries to take over a
// terminal: set the window title, clear the screen, colour, go back to the
// line start, a C1 CSI moving the cursor up, a right-to-left override.
const evil = "\x1b]0;pwned\a\x1b[2J\x1b[31mRED\r\u009b1A\u202eevil"

// evilShown is how evil must appear on the console: escaped, visible.
const evilShown = `\x1b]0;pwned\x07\x1b[2J\x1b[31mRED\r\u009b1A\u202eevil`

// assertNoControls fails when out holds a character a terminal acts on
// (newlines and tabs aside).
func assertNoControls(t *testing.T, name, out string) {
	t.Helper()
	for i, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e {
			t.Errorf("%s holds control character %U at byte %d: %q", name, r, i, out[max(0, i-40):min(len(out), i+40)])
			return
		}
	}
}

// TestConsoleNeverCarriesControlCharacters: a server whose error bodies and
// SSE error frames carry escape sequences, a run name and a stored sweep
// name and cell label holding them, never get one to the terminal: the
// profile's summary, its -v log, `runs list`, `runs show` and `compare`
// (table and markdown) show them escaped.
func TestConsoleNeverCarriesControlCharacters(t *testing.T) {
	var n atomic.Int64
	m := startWrappedMock(t, mock.Config{Fast: true}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/v1/") {
				next.ServeHTTP(w, r)
				return
			}
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "upstream says " + evil, "code": 500}})
			switch n.Add(1) % 3 {
			case 1:
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				w.Write(b)
			case 2:
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", b)
			default:
				next.ServeHTTP(w, r)
			}
		})
	})
	dir := t.TempDir()
	var outputs []invocation
	for range 2 {
		inv := cli(t, dir, quick(m.URL, "--request-count", "9", "--name", "nightly "+evil, "-v", "--ui", "simple")...)
		require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
		assert.Contains(t, inv.stdout, "3 × HTTPError 500: upstream says "+evilShown, "the error summary shows the server's words, escaped")
		outputs = append(outputs, inv)
	}

	// A store written by another tool (or an older version) may hold any
	// sweep name and cell label.
	db, err := sql.Open("sqlite3", filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	for _, q := range []string{
		`INSERT INTO sweeps (id, name, started_at, status) VALUES (7, 'sweep ` + evil + `', '2025-01-01T00:00:00Z', 'complete')`,
		`INSERT INTO cells (sweep_id, id, label, idx) VALUES (7, 'c1', 'cell ` + evil + `', 0)`,
		`UPDATE runs SET sweep_id = 7, cell_id = 'c1', trial = 1, trial_key = 'c1#1' WHERE id = 2`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	list := cli(t, dir, "runs", "list")
	require.Equal(t, ExitOK, list.code, list.stderr)
	assert.Contains(t, list.stdout, "nightly "+evilShown)
	assert.Contains(t, list.stdout, "sweep "+evilShown+"/cell "+evilShown+"#1")
	show := cli(t, dir, "runs", "show", "2")
	require.Equal(t, ExitOK, show.code, show.stderr)
	assert.Contains(t, show.stdout, "name:         nightly "+evilShown)
	assert.Contains(t, show.stdout, "cell:         cell "+evilShown)
	outputs = append(outputs, list, show)
	for _, format := range []string{"table", "markdown"} {
		cmp := cli(t, dir, "compare", "--sweep", "7", "--format", format)
		require.Equal(t, ExitOK, cmp.code, cmp.stderr)
		assert.Contains(t, cmp.stdout, evilShown)
		outputs = append(outputs, cmp)
	}
	bad := cli(t, dir, "runs", "show", "99"+evil)
	assert.Equal(t, ExitUsage, bad.code)
	outputs = append(outputs, bad)
	for i, inv := range outputs {
		assertNoControls(t, fmt.Sprintf("stdout %d", i), inv.stdout)
		assertNoControls(t, fmt.Sprintf("stderr %d", i), inv.stderr)
	}
}

// TestServerLineBreaksStayInTheErrorLine: a server whose error message
// carries a line break (and a carriage return) cannot print a line of its
// own after `aiperf: error:`: the final error of a profile whose every
// request failed, of its --wait-for-model inference probe and of `aiperf
// chat --quick` show the server's words escaped, on the error's one line.
func TestServerLineBreaksStayInTheErrorLine(t *testing.T) {
	const forged = "Run succeeded: 0 errors"
	body, err := json.Marshal(map[string]any{"error": map[string]any{"message": "boom\r\n" + forged + "\n", "code": 503}})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	shown := `boom\r\n` + forged
	base := []string{"profile", "-m", "m", "-u", srv.URL, "--ui", "none", "--request-count", "2"}
	for name, inv := range map[string]invocation{
		"profile":        cli(t, t.TempDir(), append(base, "--artifact-dir", "out")...),
		"wait-for-model": cli(t, t.TempDir(), append(base, "--artifact-dir", "out", "--wait-for-model-timeout", "1")...),
		"chat":           runChat(t, "", nil, "-m", "m", "-u", srv.URL, "-q", "hi"),
	} {
		assert.Equal(t, ExitFailure, inv.code, "%s: %s", name, inv.stderr)
		assert.Contains(t, inv.stderr, shown, "%s: the server's words, escaped", name)
		for _, line := range strings.Split(inv.stderr, "\n") {
			assert.False(t, strings.HasPrefix(line, forged), "%s: the server printed a line of its own:\n%s", name, inv.stderr)
		}
		assertNoControls(t, name+" stderr", inv.stderr)
	}
}
