package runner_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// deleteTrial deletes trial k of probe i of search sweepID from the store,
// as `aiperf runs delete` does.
func deleteTrial(t *testing.T, db *store.DB, sweepID int64, label string, k int) {
	t.Helper()
	runs, err := db.ListRuns(context.Background(), store.RunFilter{Sweep: "sla"})
	require.NoError(t, err)
	for _, r := range runs {
		if r.SweepID == sweepID && r.CellLabel == label && r.Trial == k {
			require.NoError(t, db.DeleteRuns(context.Background(), r.ID))
			return
		}
	}
	t.Fatalf("no trial %d of %s", k, label)
}

// A resumed search one of whose stored trials was deleted (aiperf runs
// delete) is refused before any trial, naming the probe and the cause:
// the probes after it were chosen from that trial.
func TestSearchResumeAfterADeletedTrialNamesIt(t *testing.T) {
	s := slaSearch(search.TrialRule{})
	db, o := searchSetup(t, s, &fakeExecutor{respond: byConcurrency})
	_, err := runner.Search(context.Background(), s, o)
	require.NoError(t, err)
	deleteTrial(t, db, o.SweepID, "search_iter_0004__concurrency_16", 1)

	none := &fakeExecutor{}
	o.Executor = none
	require.ErrorIs(t, runner.CheckSearchResume(context.Background(), s, o), runner.ErrRefused)
	_, err = runner.Search(context.Background(), s, o)
	require.ErrorIs(t, err, runner.ErrRefused)
	assert.ErrorContains(t, err, `search "sla": probe 4 (concurrency 16) has 0 trials in the store, fewer than it ran (the search went on `+
		`to probe 5, but it needs 1 trial more: 0 of 1 trials run): a stored trial of the search was deleted (aiperf runs delete)`)
	assert.ErrorContains(t, err, "nothing was sent: start it anew without --resume")
	assert.NotContains(t, err.Error(), "planner, seed or trial rule")
	assert.Empty(t, none.calls)
}

// A deleted trial below a stored one of the same probe is found from the
// trials' numbers: running the probe's next trial would take the stored
// one's number, and replace it.
func TestSearchResumeAfterADeletedFirstTrialIsRefused(t *testing.T) {
	s := slaSearch(search.TrialRule{Min: 2})
	db, o := searchSetup(t, s, &fakeExecutor{respond: byConcurrency})
	_, err := runner.Search(context.Background(), s, o)
	require.NoError(t, err)
	deleteTrial(t, db, o.SweepID, "search_iter_0007__concurrency_9", 1) // the last probe

	none := &fakeExecutor{}
	o.Executor = none
	_, err = runner.Search(context.Background(), s, o)
	require.ErrorIs(t, err, runner.ErrRefused)
	assert.ErrorContains(t, err, `probe 7 (concurrency 9) has 1 trial in the store, fewer than it ran (its trial 2 is stored, so one before it is not)`)
	assert.Empty(t, none.calls)
	h, err := db.SearchHistory(context.Background(), o.SweepID, nil)
	require.NoError(t, err)
	assert.Len(t, h.Probes[7].Trials, 1, "trial 2 is still stored")
}

// A trial that ended and is gone from the store shows by its result.json.
func TestSearchResumeFindsADeletedTrialByItsResult(t *testing.T) {
	s := slaSearch(search.TrialRule{Min: 2})
	db, o := searchSetup(t, s, childLike(10))
	_, err := runner.Search(context.Background(), s, o)
	require.NoError(t, err)
	deleteTrial(t, db, o.SweepID, "search_iter_0002__concurrency_4", 2)
	_, err = runner.Search(context.Background(), s, o)
	require.ErrorIs(t, err, runner.ErrRefused)
	assert.ErrorContains(t, err, `probe 2 (concurrency 4) has 1 trial in the store, fewer than it ran (its trial 2 ended, its result.json is in `)
}

// The last trial of the last probe deleted is run again: nothing was
// chosen from it.
func TestSearchResumeRerunsTheLastProbesDeletedTrial(t *testing.T) {
	s := slaSearch(search.TrialRule{})
	db, o := searchSetup(t, s, &fakeExecutor{respond: byConcurrency})
	first, err := runner.Search(context.Background(), s, o)
	require.NoError(t, err)
	deleteTrial(t, db, o.SweepID, "search_iter_0007__concurrency_9", 1)
	again := &fakeExecutor{respond: byConcurrency}
	o.Executor = again
	out, err := runner.Search(context.Background(), s, o)
	require.NoError(t, err)
	require.Len(t, again.calls, 1)
	assert.Equal(t, search.TrialDir(7, 1), relTo(t, o.Dir, again.calls[0].dir))
	assert.Equal(t, first.Summary.String(), out.Summary.String())
}
