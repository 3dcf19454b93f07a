package turnview

import (
	"crypto/sha256"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostile is an export whose texts try to break out of the page.
func hostile(t testing.TB) string {
	t.Helper()
	return writeExport(t, req{conv: `"><script>alert("conv")</script>`, corr: "s", model: `</title><script>alert("model")</script>`,
		msgs: []any{
			map[string]any{"role": `<img src=x onerror=alert("role")>`, "content": `<script>alert("body")</script>`},
			map[string]any{"role": "user", "content": "</pre><b>bold</b> & \x1b[2J\u202eevil\r"},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": `"><svg onload=alert(1)>`}}},
		}})
}

// TestHostileTextIsEscaped: markup in a message body, a role, a content
// part's type, a conversation id or a model is shown as text, never
// parsed: the page's only script element is its own; control and
// bidirectional characters are shown escaped.
func TestHostileTextIsEscaped(t *testing.T) {
	page := render(t, build(t, hostile(t), defaults))
	assert.Equal(t, 1, strings.Count(page, "<script"), "the page's own script only")
	for _, s := range []string{`<img`, `<svg`, `<b>bold`, `</pre><b>`, "\x1b", "\u202e", "\r"} {
		assert.NotContains(t, page, s)
	}
	for _, s := range []string{
		`&lt;script&gt;alert(&#34;body&#34;)&lt;/script&gt;`,
		`&lt;img src=x onerror=alert(&#34;role&#34;)&gt;`,
		`&lt;/pre&gt;&lt;b&gt;bold&lt;/b&gt; &amp; \x1b[2J\u202eevil\r`,
		`&lt;&#34;&gt;&lt;svg onload=alert(1)&gt;&gt;`,
		`&lt;/title&gt;&lt;script&gt;alert(&#34;model&#34;)&lt;/script&gt;`,
		`title="&#34;&gt;&lt;script&gt;alert(&#34;conv&#34;)&lt;/script&gt;"`,
	} {
		assert.Contains(t, page, s)
	}
}

// TestPageIsSelfContained: the policy allows the page's own style and
// script by their digests and nothing else; nothing is loaded from
// anywhere.
func TestPageIsSelfContained(t *testing.T) {
	page := render(t, build(t, writeExport(t, reqs(session("c", "s", 2, 1))...), defaults))
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return base64.StdEncoding.EncodeToString(h[:])
	}
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(page)
	script := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindStringSubmatch(page)
	require.Len(t, style, 2)
	require.Len(t, script, 2)
	policy := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(page)
	require.Len(t, policy, 2)
	p := strings.ReplaceAll(strings.ReplaceAll(policy[1], "&#39;", "'"), "&#43;", "+")
	assert.Contains(t, p, "default-src 'none'")
	assert.Contains(t, p, "style-src 'sha256-"+sum(style[1])+"'", "the style as written")
	assert.Contains(t, p, "script-src 'sha256-"+sum(script[1])+"'", "the script as written")
	assert.NotRegexp(t, `(?i)(src|href)="(https?:)?//`, page, "no external resource")
	assert.NotContains(t, page, "<link")
}

// TestNothingButTheMessages: the viewer shows the messages, ids, model
// and max tokens it reads, nothing else of a record: a secret elsewhere
// (responses, error, other payload or metadata fields) never reaches the
// page, and a redacted body is shown redacted.
func TestNothingButTheMessages(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	r := req{conv: "c", corr: "s", msgs: []any{user("key [REDACTED] here")}, extra: map[string]any{
		"responses": []any{map[string]any{"perf_ns": 1, "text": "echo " + secret}},
		"error":     map[string]any{"code": 401, "message": "bad key " + secret},
		"headers":   map[string]any{"Authorization": "Bearer " + secret},
	}}
	l := r.line()
	l["payload"].(map[string]any)["api_key"] = secret
	l["metadata"].(map[string]any)["note"] = secret
	v := build(t, writeExport(t, l), defaults)
	page := render(t, v)
	assert.NotContains(t, page, secret)
	assert.NotContains(t, page, "0123456789abcdef")
	assert.Contains(t, page, "key [REDACTED] here")
	assert.True(t, v.Convs[0].Turns[0].Failed, "the error is flagged, not shown")
	assert.Contains(t, page, `<span class="badge failed">error</span>`)
}

// TestFind: a run directory's raw export, AIPerf's raw_records shards
// ahead of it, a --profile-export-prefix name, or a file given itself;
// a directory without one says what writes it.
func TestFind(t *testing.T) {
	dir := writeExport(t, reqs(session("c", "s", 1, 1))...)
	files, out, err := Find(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, RawFile)}, files)
	assert.Equal(t, filepath.Join(dir, FileName), out)

	files, out, err = Find(files[0])
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, RawFile)}, files)
	assert.Equal(t, filepath.Join(dir, FileName), out, "beside the file")

	shards := filepath.Join(dir, rawRecordsDir)
	require.NoError(t, os.Mkdir(shards, 0o755))
	for _, n := range []string{"b.jsonl", "a.jsonl"} {
		require.NoError(t, os.WriteFile(filepath.Join(shards, n), nil, 0o644))
	}
	files, _, err = Find(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(shards, "a.jsonl"), filepath.Join(shards, "b.jsonl")}, files)

	named := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(named, "mine_raw.jsonl"), nil, 0o644))
	files, _, err = Find(named)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(named, "mine_raw.jsonl")}, files)

	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "profile_export.jsonl"), nil, 0o644))
	_, _, err = Find(empty)
	assert.ErrorIs(t, err, ErrNoRawExport)
	assert.ErrorContains(t, err, "aiperf profile --export-level raw")
	_, _, err = Find(filepath.Join(empty, "missing"))
	assert.ErrorContains(t, err, "missing")
}

// TestShortID keeps what tells a split corpus's conversations apart.
func TestShortID(t *testing.T) {
	assert.Equal(t, "conv-0", shortID("conv-0"))
	assert.Equal(t, "0123456789…::sa:7", shortID("0123456789abcdef0123::sa:7"))
	assert.Equal(t, strings.Repeat("x", 40)+"…", shortID(strings.Repeat("x", 50)))
}
