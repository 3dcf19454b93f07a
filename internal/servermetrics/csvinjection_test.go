package servermetrics

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileServer names a gauge, its labels, an info family and a help text
// with formulas; hostileGPU names its GPU so.
const (
	hostileServer = "# HELP neg =cmd|' /C calc'!A0\n# TYPE neg gauge\n" +
		"neg{a=\"=HYPERLINK(\\\"http://evil/\\\")\",b=\"@x\",c=\"+1\",d=\"\tx\",e=\"plain\"} -0.5\n" +
		"# TYPE \"=HYPERLINK(\\\"http://evil/\\\")x\" gauge\n{\"=HYPERLINK(\\\"http://evil/\\\")x\"} 7\n" +
		"# TYPE ok_gauge gauge\nok_gauge{\"=evil_label\"=\"v\"} 1\n" +
		"# TYPE cfg_info gauge\ncfg_info{\"-key\"=\"=val\"} 1\n"
	hostileGPU = "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" +
		"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"+GPU-0\",modelName=\"=HYPERLINK(\\\"http://evil/\\\")\",Hostname=\"@node\"} 50\n" +
		"# HELP DCGM_FI_DEV_CUSTOM =1+1 (in W).\n# TYPE DCGM_FI_DEV_CUSTOM gauge\n" +
		"DCGM_FI_DEV_CUSTOM{gpu=\"0\",UUID=\"+GPU-0\",modelName=\"=HYPERLINK(\\\"http://evil/\\\")\",Hostname=\"@node\"} 1\n"
)

// Text a server wrote never starts a CSV cell with a formula prefix; the
// numbers the export formats (a negative gauge) stay numbers.
func TestCSVExportsNeutraliseFormulas(t *testing.T) {
	srv, gpu := newExporter(t, hostileServer), newExporter(t, hostileGPU)
	srv.contentType = "text/plain; version=0.0.4; escaping=allow-utf-8"
	var clock int64
	c := collect(t, Options{Endpoints: []Target{{URL: srv.url, Source: SourceServer}, {URL: gpu.url, Source: SourceGPU}},
		Now: func() int64 { return clock }})
	clock = 1e9
	c.Mark("profiling", true)
	clock += 1e9
	c.Mark("profiling", false)
	r := c.Stop()
	require.Empty(t, r.Warnings)

	var server, gpus bytes.Buffer
	require.NoError(t, WriteCSV(&server, &r, "", meta))
	require.NoError(t, WriteGPUCSV(&gpus, &r, ""))
	for name, out := range map[string]string{"server": server.String(), "gpu": gpus.String()} {
		cr := csv.NewReader(strings.NewReader(out))
		cr.Comment, cr.FieldsPerRecord = '#', -1
		rows, err := cr.ReadAll()
		require.NoError(t, err, name)
		require.NotEmpty(t, rows, name)
		for _, row := range rows {
			for _, cell := range row {
				if cell == "" || !strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
					continue
				}
				_, err := strconv.ParseFloat(cell, 64)
				assert.NoError(t, err, "%s: a cell a spreadsheet would run: %q", name, cell)
			}
		}
	}
	s := server.String()
	assert.Contains(t, s, `,gauge,"'=HYPERLINK(""http://evil/"")x",`, "a metric name")
	assert.Contains(t, s, `'=evil_label`, "a label name (a column)")
	assert.Contains(t, s, `"'=HYPERLINK(""http://evil/"")"`, "a label value")
	assert.Contains(t, s, `,'@x,+1,'`+"\t"+`x,plain,'=cmd|' /C calc'!A0`, "label values and the description")
	assert.Contains(t, s, `,-0.5000,`, "a negative gauge stays a number")
	assert.Contains(t, s, `cfg_info,'-key,'=val,`, "an info family's key and value")
	g := gpus.String()
	assert.Contains(t, g, `,0,"'=HYPERLINK(""http://evil/"")",'+GPU-0,nvidia,`, "the GPU's name and UUID")
	assert.Contains(t, g, `,'=1+1 (W),`, "a custom field's help")
	assert.Contains(t, g, `,'@node`+"\r\n", "the GPU's host (AIPerf's optional Hostname column)")
}
