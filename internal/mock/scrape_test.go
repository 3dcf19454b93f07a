package mock

import (
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// scrape reads a Prometheus text endpoint and parses it with the Prometheus
// project's own parser, under the strict legacy name rules.
func scrape(t testing.TB, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/plain; version=0.0.4; charset=utf-8", resp.Header.Get("Content-Type"))
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// labels returns a sample's labels as a map.
func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// single returns the value of a family's only sample (a gauge or counter).
func single(t testing.TB, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f := fams[name]
	require.NotNil(t, f, "no %s", name)
	require.Len(t, f.GetMetric(), 1, name)
	m := f.GetMetric()[0]
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	}
	t.Fatalf("%s is a %s", name, f.GetType())
	return 0
}

// hist returns a histogram family's only histogram.
func hist(t testing.TB, fams map[string]*dto.MetricFamily, name string) *dto.Histogram {
	t.Helper()
	f := fams[name]
	require.NotNil(t, f, "no %s", name)
	require.Equal(t, dto.MetricType_HISTOGRAM, f.GetType(), name)
	require.Len(t, f.GetMetric(), 1, name)
	return f.GetMetric()[0].GetHistogram()
}
