package swimlane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var dataRe = regexp.MustCompile(`(?m)^const DATA = (.*);$`)

// page writes the view's viewer and returns it and its data.
func page(t *testing.T, v *View) (string, payload) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, v.WriteHTML(&buf))
	html := buf.String()
	m := dataRe.FindStringSubmatch(html)
	require.NotNil(t, m, "the page holds its data")
	var p payload
	require.NoError(t, json.Unmarshal([]byte(m[1]), &p))
	return html, p
}

// The viewer is one file that loads nothing: a policy forbids any
// request; it holds every drawn request with its row, session and
// failure, and the curves exactly (a small run).
func TestWriteHTML(t *testing.T) {
	v := NewView(failedRun(t, true), Options{Target: 2})
	html, p := page(t, v)
	assert.Contains(t, html, `<meta http-equiv="Content-Security-Policy" content="default-src 'none';`)
	for _, ref := range []string{"src=", "href=", "url(", "@import", "http://", "https://"} {
		assert.NotContains(t, html, ref)
	}
	require.Len(t, p.Req.S, 6)
	assert.Equal(t, []int{0, 0, 0, 1, 1, 1}, p.Req.Row)
	assert.Equal(t, []int{0, 0, 1, 0, 0, 0}, p.Req.Flag, "the third request of s1 failed")
	assert.Equal(t, []float64{0, 0.32, 0.62, 0.1, 0.45, 0.72}, p.Req.S)
	assert.Equal(t, []string{"500 Internal Server Error: boom"}, p.Errors)
	assert.Equal(t, 2, p.Target)
	assert.Equal(t, 2, p.Peak)
	require.Len(t, p.Active.T, len(v.Active))
	for i, s := range v.Active {
		assert.Equal(t, s.V, p.Active.V[i])
		assert.InDelta(t, v.sec(s.T), p.Active.T[i], 1e-4)
	}
	require.NotNil(t, p.Ramp)
	assert.InDelta(t, 0.5, *p.Ramp, 1e-9)
}

// Names from the export cannot break out of the page's script, and their
// control characters are shown escaped.
func TestWriteHTMLHostile(t *testing.T) {
	evil := "</script><script>alert(1)</script>\x1b[31m"
	v := NewView(load(t, []string{rec(evil, "c<!--", 0, 0, 10, nil, "")}, ""), Options{})
	html, p := page(t, v)
	assert.Equal(t, 1, strings.Count(html, "</script>"), "only the page's own script ends")
	assert.NotContains(t, html, "\x1b")
	assert.Equal(t, `</script><script>alert(1)</script>\x1b[31m`, p.Sessions[0].ID)
}

// The viewer holds the drawn lanes in time order while they hold at most
// its limit of requests, and says so.
func TestHTMLLimit(t *testing.T) {
	var lines []string
	for i := range 10 {
		s := fmt.Sprintf("s%d", i)
		lines = append(lines, rec(s, "c", 0, float64(100*i), float64(100*i+40), nil, ""), rec(s, "c", 1, float64(100*i+50), float64(100*i+90), nil, ""))
	}
	v := NewView(load(t, lines, ""), Options{})
	p := v.payload(7)
	assert.Len(t, p.Sessions, 3)
	assert.Len(t, p.Req.S, 6)
	assert.Contains(t, p.Notes[len(p.Notes)-1], "the viewer holds the 6 requests of the first 3 sessions to start")
	p = v.payload(1)
	assert.Len(t, p.Req.S, 1, "a first lane over the limit is cut at it")
	assert.Contains(t, p.Notes[len(p.Notes)-1], "the viewer holds the 1 requests of the first 1 sessions to start, at most 1")
}

// A lane holding more requests than the viewer's limit (one long session,
// or a root with many subagents) is cut at the limit, by session start
// then turn, with the note: before, the first lane was held whole,
// however many requests it had.
func TestHTMLLimitCutsTheFirstLane(t *testing.T) {
	var lines []string
	for i := range 10 {
		lines = append(lines, rec("s", "c", i, float64(100*i), float64(100*i+40), nil, ""))
	}
	for i := range 3 {
		lines = append(lines, rec(fmt.Sprintf("kid%d", i), "k", 0, float64(10+i), float64(20+i), map[string]any{"parent_correlation_id": "s", "agent_depth": 1}, ""))
	}
	v := NewView(load(t, lines, ""), Options{})
	require.Len(t, v.Layout.Lanes, 1, "one lane: the root and its subagents")
	p := v.payload(4)
	assert.Len(t, p.Req.S, 4)
	assert.Equal(t, []int32{0, 1, 2, 3}, p.Req.Turn, "the root's first turns")
	assert.Len(t, p.Sessions, 1)
	assert.Contains(t, p.Notes[len(p.Notes)-1], "the viewer holds the 4 requests of the first 1 sessions to start, at most 4")
	p = v.payload(11)
	assert.Len(t, p.Req.S, 11)
	assert.Len(t, p.Sessions, 2, "the root whole, then the first subagent's request")
	_, p = page(t, v)
	assert.Len(t, p.Req.S, 13, "under the limit: every request")
}
