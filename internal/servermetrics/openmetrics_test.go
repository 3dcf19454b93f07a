package servermetrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/prototext"
)

// omHeader is an OpenMetrics 1.0 response's.
var omHeader = http.Header{"Content-Type": {"application/openmetrics-text; version=1.0.0; charset=utf-8"}}

// omBody is an OpenMetrics exposition of every type the timeline reduces,
// with what only OpenMetrics has: _total and _created samples, UNIT,
// timestamps in seconds, exemplars, escapes, the type unknown and # EOF.
const omBody = `# HELP gen_tokens T \"g\" \\ s.\n
# TYPE gen_tokens counter
# UNIT gen_tokens tokens
gen_tokens_total{m="\"\\"} 1027.0 1.7e9 # {t="#}"} 1 1.7e9
gen_tokens_created{m="\"\\"} 1.7e9
gen_tokens_total{m="n"} 5
# TYPE lat histogram
lat_bucket{le="0.01"} 1 # {t="x"} 0.005
lat_bucket{le="0.1"} 7
lat_bucket{le="+Inf"} 9
lat_count 9
lat_sum 0.75
lat_created 1.7e9
# TYPE rpc summary
rpc{quantile="0.5"} 0.2
rpc{quantile="0.99"} NaN
rpc_count 3
rpc_sum 0.9
# TYPE run gauge
run{e="0"} 4 1700000000.250
run{e="1"} -1.5e3
# TYPE temp unknown
temp +Inf
# EOF
`

// decodeExpfmt reads body with expfmt's own OpenMetrics parser: what parse
// must give (it is too slow to be used).
func decodeExpfmt(t *testing.T, body string) []*dto.MetricFamily {
	t.Helper()
	d := expfmt.NewDecoder(strings.NewReader(body), expfmt.Format(omHeader.Get("Content-Type")))
	var fams []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		err := d.Decode(mf)
		if errors.Is(err, io.EOF) {
			return fams
		}
		require.NoError(t, err)
		fams = append(fams, mf)
	}
}

// comparable is fams sorted by name, without what the timeline does not
// read (timestamps, exemplars, creation times, units), as text.
func comparable(fams []*dto.MetricFamily) string {
	slices.SortFunc(fams, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	var out bytes.Buffer
	for _, mf := range fams {
		mf.Unit = nil
		for _, m := range mf.GetMetric() {
			m.TimestampMs = nil
			if c := m.GetCounter(); c != nil {
				c.Exemplar, c.CreatedTimestamp = nil, nil
			}
			if h := m.GetHistogram(); h != nil {
				h.CreatedTimestamp = nil
				for _, bk := range h.GetBucket() {
					bk.Exemplar = nil
				}
			}
			if s := m.GetSummary(); s != nil {
				s.CreatedTimestamp = nil
			}
		}
		out.WriteString(prototext.Format(mf) + "\n")
	}
	return out.String()
}

// An OpenMetrics body gives what expfmt's own OpenMetrics parser gives of
// it (a counter's family named with _total, as that parser names it),
// timestamps, exemplars and creation times aside.
func TestOpenMetricsParsesAsExpfmtDoes(t *testing.T) {
	fams, err := parse(context.Background(), []byte(omBody), omHeader)
	require.NoError(t, err)
	assert.Equal(t, comparable(decodeExpfmt(t, omBody)), comparable(fams))
	i := slices.IndexFunc(fams, func(mf *dto.MetricFamily) bool { return mf.GetName() == "gen_tokens_total" })
	require.GreaterOrEqual(t, i, 0, "named as expfmt's OpenMetrics parser names it")
	assert.Equal(t, "T \"g\" \\ s.\n", fams[i].GetHelp())
	assert.Equal(t, "\"\\", fams[i].GetMetric()[0].GetLabel()[0].GetValue())

	asText, err := parse(context.Background(), []byte("# TYPE jobs_total counter\njobs_total 3 1700000000000\n"), omHeader)
	require.NoError(t, err, "a text body sent as OpenMetrics")
	assert.Equal(t, "jobs_total", asText[0].GetName())
	assert.Equal(t, 3.0, asText[0].GetMetric()[0].GetCounter().GetValue())
}

// The OpenMetrics types the text format has not (info, stateset,
// gaugehistogram), which the timeline does not reduce, are left out with
// their samples; the body's other families stay (expfmt's parser refused
// the whole body).
func TestOpenMetricsTypesTheTextFormatHasNot(t *testing.T) {
	body := "# TYPE build info\nbuild_info{version=\"1.2\"} 1\n" +
		"# TYPE state stateset\nstate{state=\"a\"} 1\nstate{state=\"b\"} 0\n" +
		"# TYPE queue gaugehistogram\nqueue_bucket{le=\"1\"} 2\nqueue_bucket{le=\"+Inf\"} 3\nqueue_gcount 3\nqueue_gsum 2\n" +
		"# TYPE running gauge\nrunning 4\n# EOF\n"
	fams, err := parse(context.Background(), []byte(body), omHeader)
	require.NoError(t, err)
	require.Len(t, fams, 1)
	assert.Equal(t, "running", fams[0].GetName())
	assert.Equal(t, 4.0, fams[0].GetMetric()[0].GetGauge().GetValue())
}

// A parse stops once its scrape's context ends (its timeout, the run's
// end), in OpenMetrics and in the text format alike: it says why, and
// fetch calls a timeout one.
func TestParseEndsWithItsScrape(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, h := range []http.Header{omHeader, {"Content-Type": {"text/plain; version=0.0.4"}}} {
		fams, err := parse(ctx, []byte(omBody), h)
		assert.ErrorIs(t, err, context.Canceled, h)
		assert.Nil(t, fams)
	}
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	_, err := parse(expired, []byte(omBody), omHeader)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// A line omText cannot read is kept for the text parser to refuse, and
// nothing it is given makes it panic.
func TestOmTextKeepsWhatItCannotRead(t *testing.T) {
	for _, body := range []string{"{", "{\"", "{\"a", "g{a=\"b", "g{a=\"b\\", "# TYPE \"x", "#", "# ", "{\"n\" 1", "{} 1",
		"# TYPE c counter\n{\"c_total\"} 1\n"} {
		text, _ := omText([]byte(body))
		if body != "#" && body != "# " && !strings.HasPrefix(body, "# TYPE c") {
			assert.Equal(t, strings.TrimSpace(body)+"\n", string(text), body)
		}
	}
	text, totals := omText([]byte("# TYPE \"c.d\" counter\n{\"c.d_total\",a=\"1\"} 1 # {} 1\n"))
	assert.Equal(t, "# TYPE \"c.d\" counter\n{\"c.d\",a=\"1\"} 1\n", string(text), "a quoted name renamed in its quotes")
	assert.True(t, totals["c.d"])
}
