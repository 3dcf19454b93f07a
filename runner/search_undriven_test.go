package runner_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
)

// A search stopped before a load it could not drive says so in its answer,
// printed and stored alike, and compares its trials with a grid of the
// loads it drove ([1, 8] at 8 requests a probe), not of its whole space:
// it never claims the range above 8, which it did not test.
func TestUndrivenSearchAnswerNamesWhatItDidNotDrive(t *testing.T) {
	s := slaSearch(search.TrialRule{})
	s.Base.RequestCount = plan.Ptr(8)
	l := &fakeExecutor{respond: func(_ context.Context, _ int, spec runner.Spec) (*result.Run, error) {
		return completeRun(spec, 1), nil
	}}
	db, o := searchSetup(t, s, l)
	out, err := runner.Search(context.Background(), s, o)
	require.NoError(t, err)
	require.Equal(t, runner.ReasonUndriven, out.Reason)
	want := "concurrency: 8 passed (one trial), nothing failed; concurrency above 8 not driven: --request-count 8 cannot drive them; " +
		"4 probes, 4 trials against 8 for a 8-cell grid"
	assert.Equal(t, want, out.Summary.String(), "the answer printed")

	sweeps, err := db.ListSweeps(context.Background(), 0)
	require.NoError(t, err)
	require.Len(t, sweeps, 1)
	assert.Equal(t, want, sweeps[0].Answer, "the answer stored")

	var doc search.HistoryDoc
	readJSONFile(t, filepath.Join(o.Dir, runner.HistoryFile), &doc)
	assert.Equal(t, search.GridDoc{Cells: 8, Trials: 8}, doc.GridEquivalent)
	require.NotNil(t, doc.Undriven)
	assert.Equal(t, "--request-count 8 cannot drive them", doc.Undriven.Why)
	assert.Equal(t, map[string]any{"phases.profiling.concurrency": float64(16)}, doc.Undriven.Next)
	require.Len(t, doc.Undriven.Driven, 1)
	assert.Equal(t, [2]float64{1, 8}, [2]float64{doc.Undriven.Driven[0].Lo, doc.Undriven.Driven[0].Hi})

	again, err := runner.Search(context.Background(), s, o) // a resume replays it to the same answer
	require.NoError(t, err)
	assert.Equal(t, want, again.Summary.String())
	assert.Len(t, l.calls, 4, "nothing ran again")
}

// A search's cooldown is checked as a sweep's before anything runs: one
// too long to pause for (or not a number) would overflow to no pause.
func TestSearchRefusesAnUnboundedCooldown(t *testing.T) {
	for _, cool := range []float64{1e10, math.Inf(1), math.NaN(), -1} {
		s := slaSearch(search.TrialRule{})
		s.CooldownSeconds = cool
		l := &fakeExecutor{respond: byConcurrency}
		_, o := searchSetup(t, s, l)
		_, err := runner.Search(context.Background(), s, o)
		require.Error(t, err, "%g", cool)
		assert.Contains(t, err.Error(), `search "sla": --cooldown-seconds must be`)
		assert.Contains(t, err.Error(), "(nothing was sent)")
		assert.Empty(t, l.calls, "%g", cool)
	}
}
