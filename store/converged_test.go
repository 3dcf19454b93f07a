package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// TestConvergedCellsAndResume: a cell a convergence criterion stopped
// early is marked with why, until a resume (which may plan other trials)
// clears every mark for the resumed run to set again; the resume's trials
// replace those the sweep started with.
func TestConvergedCellsAndResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	cells := []plan.Cell{testCell("scan", 1, 0), testCell("scan", 4, 1)}
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: "scan", PlanSHA256: "abc", Trials: 3, Cells: cells})
	require.NoError(t, err)
	const why = "time_to_first_token avg: cv 1.0% <= 5%"
	require.NoError(t, db.MarkConverged(ctx, id, cells[1].ID, 3, why))
	require.ErrorIs(t, db.MarkConverged(ctx, id, "no-such-cell", 3, "x"), store.ErrNotFound)
	require.NoError(t, db.FinishSweep(ctx, id, result.StatusComplete))
	s, err := db.SweepRuns(ctx, "scan", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"", why}, []string{s.Cells[0].Converged, s.Cells[1].Converged})
	assert.Equal(t, []int{0, 3}, []int{s.Cells[0].ConvergedAfter, s.Cells[1].ConvergedAfter})
	assert.Equal(t, 3, s.Sweep.Trials)

	require.NoError(t, db.ReopenSweep(ctx, id, 5), "a resume with more trials")
	s, err = db.SweepRuns(ctx, "scan", nil)
	require.NoError(t, err)
	assert.Empty(t, s.Cells[1].Converged, "the resumed run judges the cell again")
	assert.Zero(t, s.Cells[1].ConvergedAfter)
	assert.Equal(t, 5, s.Sweep.Trials, "the trials the resume plans, not those the sweep started with")
	assert.Equal(t, "running", s.Sweep.Status)
	require.ErrorIs(t, db.ReopenSweep(ctx, 999, 1), store.ErrNotFound)
}
