package servermetrics

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// families parses a text exposition.
func families(t testing.TB, text string) []*dto.MetricFamily {
	t.Helper()
	fams, err := parse(context.Background(), []byte(text), http.Header{"Content-Type": {"text/plain; version=0.0.4"}})
	require.NoError(t, err)
	return fams
}

// A long run is thinned, never dropped: the retained scrapes stay under
// the cap, the marks' scrapes and the latest survive, and a counter's
// increase over the run is unchanged.
func TestThinningKeepsMarksAndCounterTotals(t *testing.T) {
	b := newEndpointBuf(DefaultMaxSeries, asIs)
	const n = 10000
	for i := range n {
		text := fmt.Sprintf("# TYPE c_total counter\nc_total %d\n# TYPE g gauge\ng %d\n", i, i%10)
		b.add(families(t, text), int64(i), 1, i%1000 == 0)
	}
	require.LessOrEqual(t, len(b.times), maxRetained)
	assert.GreaterOrEqual(t, len(b.times), maxRetained/2)
	assert.Equal(t, int64(n-1), b.times[len(b.times)-1], "the latest scrape")
	for i := 0; i < n; i += 1000 {
		assert.Equal(t, int64(i), b.times[b.at(int64(i))], "mark at %d", i)
	}
	var c *seriesBuf
	for _, s := range b.order {
		if s.fam.name == "c" {
			c = s
		}
		assert.Len(t, s.vals, len(b.times), "every column thinned alike")
	}
	total, _ := increase(c.vals, 0, len(c.vals)-1)
	assert.Equal(t, float64(n-1), total)
}

// The cap follows the width: a wide exporter keeps fewer scrapes, within
// the value budget (lowered here from 4 Mi values so that the test is quick).
func TestThinningCapFollowsWidth(t *testing.T) {
	defer func(v int) { valueBudget = v }(valueBudget)
	valueBudget = 2000 * 100
	var sb strings.Builder
	sb.WriteString("# TYPE wide gauge\n")
	for i := range 2000 {
		fmt.Fprintf(&sb, "wide{i=\"%d\"} %d\n", i, i)
	}
	fams := families(t, sb.String())
	b := newEndpointBuf(DefaultMaxSeries, asIs)
	for i := range 250 {
		b.add(fams, int64(i), 1, false)
	}
	assert.Equal(t, 100, b.capacity())
	assert.LessOrEqual(t, len(b.times), b.capacity())
	assert.LessOrEqual(t, len(b.times)*b.width, valueBudget)
}

// A family that changes type or a histogram that changes its buckets does
// not corrupt its series.
func TestLayoutChanges(t *testing.T) {
	b := newEndpointBuf(DefaultMaxSeries, asIs)
	b.add(families(t, "# TYPE x gauge\nx 1\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"), 1, 0, false)
	b.add(families(t, "# TYPE x counter\nx 5\n# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"+Inf\"} 3\nh_sum 4\nh_count 3\n"), 2, 0, false)
	x, h := b.series["x"], b.series["h"]
	assert.Equal(t, TypeCounter, x.typ)
	assert.Len(t, x.vals, 2, "started over as a counter")
	assert.True(t, isNaN(h.count[1]), "other buckets: the sample is ignored")
	assert.Len(t, h.cells, 2*h.stride())
}

func isNaN(v float64) bool { return v != v }

// asIs is a redaction that keeps everything.
func asIs(s string) string { return s }
