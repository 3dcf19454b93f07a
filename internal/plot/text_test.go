package plot_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/plot/plottest"
	"github.com/aiperf-go/aiperf/store"
)

func TestLabel(t *testing.T) {
	for in, want := range map[string]string{
		"plain model/name α": "plain model/name α",
		"evil\x1b[2J\x07":    `evil\x1b[2J\x07`,
		"a\ufffeb\uffffc":    `a\ufffeb\uffffc`,
		"bad\xed\xa0\x80x":   `bad\xed\xa0\x80x`, // an encoded surrogate is invalid UTF-8
		"tab\tnl\ncr\r":      `tab\tnl\ncr\r`,
		"\u202eoverride":     `\u202eoverride`,
	} {
		assert.Equal(t, want, plot.Label(in), "%q", in)
	}
}

// hostile holds every kind of character XML 1.0 does not allow.
const hostile = "evil\x1b[2J\x07\ufffe\uffff\xed\xa0\x80\x00"

// TestSVGWellFormedWithHostileNames draws every kind of figure of two
// sweeps whose names (series, titles, legends) hold control characters,
// noncharacters and invalid UTF-8: each SVG parses as XML, in both themes,
// and shows the characters escaped.
func TestSVGWellFormedWithHostileNames(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "aiperf.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	names := []string{"a" + hostile, "b" + hostile}
	for i, n := range names {
		_, err := plottest.Save(ctx, db, plottest.Sweep{Name: n, Cells: 2, Trials: 2, TTFTMs: 20 * float64(i+1), Seed: uint64(i)})
		require.NoError(t, err)
	}
	d, err := plot.Load(ctx, db, plot.Selection{Sweeps: names}, 0.95)
	require.NoError(t, err)
	figs, _ := d.Figures()
	require.NotEmpty(t, figs)
	for _, theme := range plot.Themes {
		for _, f := range plot.Themed(figs, theme) {
			var buf bytes.Buffer
			require.NoError(t, f.Encode(&buf, "svg", 640, 400), f.Name)
			svg := buf.String()
			dec := xml.NewDecoder(strings.NewReader(svg))
			for {
				_, err := dec.Token()
				if err == io.EOF {
					break
				}
				require.NoError(t, err, "%s (%s) is well-formed XML", f.Name, theme)
			}
			assert.NotContains(t, svg, "\x1b", f.Name)
			assert.NotContains(t, svg, "\uffff", f.Name)
		}
	}
	var buf bytes.Buffer
	require.NoError(t, figs[0].Encode(&buf, "svg", 640, 400))
	assert.Contains(t, buf.String(), `evil\x1b[2J\x07\ufffe\uffff\xed\xa0\x80\x00`, "the legend shows the name escaped")
}
