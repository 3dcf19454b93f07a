package examples_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/livemetrics"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestGrafanaDashboards: every dashboard in grafana/ is valid JSON of
// panels with PromQL targets, and every aiperf_* series they query is
// one --metrics-listen serves (read from a live endpoint, not a list).
func TestGrafanaDashboards(t *testing.T) {
	files, err := filepath.Glob("grafana/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	served := servedFamilies(t)
	name := regexp.MustCompile(`\baiperf_[a-z_]+`)
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		var dash struct {
			Title  string `json:"title"`
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
		}
		require.NoError(t, json.Unmarshal(b, &dash), file)
		require.NotEmpty(t, dash.Title, file)
		require.NotEmpty(t, dash.Panels, file)
		for _, p := range dash.Panels {
			require.NotEmpty(t, p.Targets, "%s: panel %q", file, p.Title)
			for _, tg := range p.Targets {
				for _, m := range name.FindAllString(tg.Expr, -1) {
					base := m
					for _, suffix := range []string{"_bucket", "_sum", "_count"} {
						base = strings.TrimSuffix(base, suffix)
					}
					assert.True(t, served[base], "%s: panel %q queries %s, which --metrics-listen does not serve", file, p.Title, m)
				}
			}
		}
	}
}

// servedFamilies are the metric families a live endpoint serves once a
// phase is under way and a record of each outcome finished.
func servedFamilies(t *testing.T) map[string]bool {
	ln, err := livemetrics.Listen("127.0.0.1:0")
	require.NoError(t, err)
	s := livemetrics.Serve(ln, livemetrics.Options{Streaming: true, Info: map[string]string{"model": "m"}})
	defer s.Close(context.Background(), 0)
	pr := &load.Progress{Phase: &plan.Phase{Name: "profiling", Kind: plan.KindProfiling}}
	s.Watch(func() *load.Progress { return pr }, load.NewClock())
	s.Record(&metrics.Record{Phase: "profiling", OutputTokens: 2, ResponseNs: metrics.StampsOf(1e6, 2e6)})
	s.Record(&metrics.Record{Phase: "profiling", Error: &metrics.Error{Type: "Timeout"}})
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	out := map[string]bool{}
	for n := range fams {
		out[strings.TrimSuffix(n, "_total")] = true
		out[n] = true
	}
	return out
}
