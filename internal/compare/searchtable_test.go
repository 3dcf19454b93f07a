package compare_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/store"
)

// TestSearchTableFits80Columns: a search's probes table is a row per
// probe, numbered (not its 30-character search_iter_NNNN__... label), with
// short titles and no Pareto column, so that with a search's statistics
// (two SLA filters and the objective, each with its ± half width) every
// line fits an 80-column terminal without a title or cell wrapping.
func TestSearchTableFits80Columns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openStore(t, ":memory:")
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: "max-concurrency-under-sla", Trials: 3, Kind: store.KindSearch})
	require.NoError(t, err)
	for probe, c := range []int{1, 2, 4, 8, 16, 12, 10, 9, 1000} {
		params := []plan.Param{{Name: "concurrency", Value: float64(c)}}
		cell := plan.Cell{ID: plan.CellID("s", append(params, plan.Param{Name: "search_iter", Value: probe})),
			Label: fmt.Sprintf("search_iter_%04d__%s", probe, plan.CellLabel(params)), Index: probe, Params: params}
		for n, tr := range []trial{{ttft: 150.25, rps: 31.5}, {ttft: 162.5, rps: 30.25}, {ttft: 148.75, rps: 29.5}} {
			_, err := db.SaveRun(ctx, makeRun(setup{sweepID: id, cell: &cell}, n+1, tr), "")
			require.NoError(t, err)
		}
	}
	keys, err := compare.ParseKeys([]string{"time_to_first_token.p99,inter_token_latency.avg,output_token_throughput.avg"})
	require.NoError(t, err)
	opt := compare.Options{Keys: keys}
	s, err := db.SweepRuns(ctx, "max-concurrency-under-sla", opt.StatKeys())
	require.NoError(t, err)
	rep := compare.Sweep(s, opt)

	tb := rep.Table()
	assert.Equal(t, []string{"probe", "conc", "trials", "TTFT p99 (ms)", "ITL avg (ms)", "output tok/s"}, tb.Header)
	assert.Equal(t, []string{"0", "1", "3"}, tb.Rows[0][:3])
	assert.Equal(t, []string{"8", "1000", "3"}, tb.Rows[8][:3])
	assert.Equal(t, "search_iter_0008__concurrency_1000", rep.Cells[8].Label, "the JSON keeps the label")

	var b bytes.Buffer
	require.NoError(t, compare.Render(&b, rep, compare.FormatTable))
	out := b.String()
	assert.Contains(t, out, `Search "max-concurrency-under-sla"`)
	assert.Contains(t, out, "± ", "the half widths are in the table")
	assert.NotContains(t, out, "pareto")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, line := range lines {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 80, "%q", line)
	}
	rows := 0
	for _, line := range lines {
		if strings.HasPrefix(line, "│") {
			rows++
		}
	}
	assert.Equal(t, 1+9, rows, "one line for the titles and one per probe: nothing wraps\n%s", out)
}
