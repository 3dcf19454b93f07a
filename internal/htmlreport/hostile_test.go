package htmlreport_test

import (
	"context"
	"encoding/xml"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plot/plottest"
	"github.com/aiperf-go/aiperf/store"
)

// TestReportEscapesControlCharacters reports on sweeps whose names hold
// terminal control characters and characters XML does not allow: the page
// shows them escaped (in the title, tables, figure captions and
// aria-labels) and every inline SVG is well-formed XML.
func TestReportEscapesControlCharacters(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "aiperf.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	names := []string{"a\x1b[2J\x07\uffff", "b\x1b[2J\x07\ufffe"}
	for i, n := range names {
		_, err := plottest.Save(ctx, db, plottest.Sweep{Name: n, Cells: 2, Trials: 2, TTFTMs: 20 * float64(i+1), Seed: uint64(i)})
		require.NoError(t, err)
	}
	html := string(writeReport(t, load(t, db, names...), filepath.Join(t.TempDir(), "r.html")))

	bad := regexp.MustCompile("[\x00-\x08\x0b\x0c\x0d\x0e-\x1f\x7f\ufffe\uffff]").FindAllStringIndex(html, -1)
	for _, ix := range bad {
		t.Errorf("raw %q after %q", html[ix[0]:ix[1]], html[max(0, ix[0]-60):ix[0]])
	}
	assert.Contains(t, html, `<title>aiperf report: sweeps a\x1b[2J\x07\uffff, b\x1b[2J\x07\ufffe</title>`)
	assert.Regexp(t, `aria-label="[^"]*a\\x1b\[2J\\x07\\uffff`, html, "a figure's aria-label")
	assert.Regexp(t, `(?s)<figcaption>[^<]*<span class="series">.*?a\\x1b\[2J\\x07\\uffff</label>`, html, "a figure's legend")

	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(html, -1)
	require.NotEmpty(t, svgs)
	for i, svg := range svgs {
		dec := xml.NewDecoder(strings.NewReader(svg))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, "inline SVG %d is well-formed XML", i)
		}
	}
}
