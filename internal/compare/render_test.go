package compare_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/compare"
)

type tableReport compare.Table

func (r tableReport) Table() compare.Table { return compare.Table(r) }

// TestRenderCSVCells: a "mean ± half width" column becomes two columns of
// numbers (a cell without a half width leaves the second empty), and text
// a server named (a metric, a label) cannot run as a spreadsheet formula.
func TestRenderCSVCells(t *testing.T) {
	r := tableReport{
		Header: []string{"metric", "base", "base Δ"},
		Rows: [][]string{
			{`=HYPERLINK("http://evil/")`, "20.07 ± 0.63", "+1.5%"},
			{"vllm:num_requests_running", "3.00 *", "n/a"},
		},
	}
	var b strings.Builder
	require.NoError(t, compare.Render(&b, r, compare.FormatCSV))
	assert.Equal(t, "metric,base,base ±,base Δ,best\n"+
		`"'=HYPERLINK(""http://evil/"")",20.07,0.63,+1.5%,`+"\n"+
		"vllm:num_requests_running,3.00,,n/a,base\n", b.String(), "a best mark moves to the best column")
}
