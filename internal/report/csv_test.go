package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// A run read from a file written elsewhere names its own metrics: a name a
// spreadsheet would run as a formula starts with a single quote; values,
// negative ones included, stay numbers and AIPerf's names stay as they are.
func TestWriteCSVNeutralisesFormulaNames(t *testing.T) {
	run := minimalRun()
	run.Profiling = metrics.Summarize(nil, false)
	run.Profiling.Metrics = append(run.Profiling.Metrics,
		metrics.Metric{Tag: "x_evil", Header: `=HYPERLINK("http://evil/")`, Value: -0.5},
		metrics.Metric{Tag: "y_evil", Header: "@cmd", Unit: "ms", Stats: &metrics.Stats{Avg: -1.25}})
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, run))
	out := buf.String()
	assert.Contains(t, out, "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\r\n'@cmd (ms),-1.25,0.00,")
	assert.Contains(t, out, "\r\nMetric,Value\r\nError Request Count,0.00\r\nRequest Count,0.00\r\n\"'=HYPERLINK(\"\"http://evil/\"\")\",-0.50\r\n")
	cr := csv.NewReader(strings.NewReader(out))
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	require.NoError(t, err)
	for _, row := range rows {
		assert.NotContains(t, "=+-@", row[0][:1], "%q", row[0])
	}
}
