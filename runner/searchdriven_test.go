package runner_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
)

// TestSearchThatDrivesNoProbeFails: with 8 requests a probe, a space
// starting at concurrency 16 holds no load the search can drive: it stops
// before its first probe, sends nothing, and fails (ErrNothingDriven, the
// reason in its error) instead of returning an empty answer as a success.
// Its history still says why it stopped.
func TestSearchThatDrivesNoProbeFails(t *testing.T) {
	s := slaSearch(search.TrialRule{})
	s.Base.RequestCount = new(8)
	s.Config.Space[0].Lo = 16
	l := &fakeExecutor{respond: func(ctx context.Context, n int, spec runner.Spec) (*result.Run, error) {
		return completeRun(spec, 1), nil
	}}
	_, o := searchSetup(t, s, l)
	out, err := runner.Search(context.Background(), s, o)
	require.Error(t, err)
	assert.True(t, errors.Is(err, runner.ErrNothingDriven), "%v", err)
	assert.False(t, errors.Is(err, runner.ErrTrialsFailed))
	assert.Contains(t, err.Error(), `search "sla": no probe was driven: it stopped (undriven_load) before its first probe, concurrency 16, `+
		"which cannot be driven: its concurrency 16 is more than the 8 requests it sends")
	assert.Contains(t, err.Error(), "--request-count")
	assert.Equal(t, runner.ReasonUndriven, out.Reason)
	assert.Empty(t, l.calls, "nothing was sent")
	var doc search.HistoryDoc
	readJSONFile(t, filepath.Join(o.Dir, runner.HistoryFile), &doc)
	require.NotNil(t, doc.ConvergenceReason)
	assert.Equal(t, runner.ReasonUndriven, *doc.ConvergenceReason)
}

// TestSearchStopsBelowAnUndrivenLoadWithoutFailing: a search that drove
// probes before reaching one it cannot drive answers with them, no error
// (ErrNothingDriven is only for a search that drove nothing).
func TestSearchStopsBelowAnUndrivenLoadWithoutFailing(t *testing.T) {
	s := slaSearch(search.TrialRule{})
	s.Base.RequestCount = new(8)
	_, o := searchSetup(t, s, &fakeExecutor{respond: byConcurrency})
	var progress bytes.Buffer
	o.Progress = &progress
	out, err := runner.Search(context.Background(), s, o)
	require.NoError(t, err)
	assert.Equal(t, runner.ReasonUndriven, out.Reason)
	assert.Equal(t, 4, out.Completed)
}

// TestUndrivenSpace: a space is undriven when every corner is: its lowest
// load above the base's request count, not when a corner drives (a lower
// bound the count holds, a searched request count or rate that reaches it,
// a duration).
func TestUndrivenSpace(t *testing.T) {
	undriven := func(lo, hi float64, set func(*plan.Search)) plan.Search {
		s := slaSearch(search.TrialRule{})
		s.Base.RequestCount = new(8)
		s.Config.Space[0].Lo, s.Config.Space[0].Hi = lo, hi
		if set != nil {
			set(&s)
		}
		return s
	}
	u, ok, err := runner.UndrivenSpace(undriven(50, 100, nil))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 50, u.Concurrency)
	assert.Equal(t, 8, u.Requests)
	assert.Equal(t, 100, u.Highest)
	assert.Equal(t, []plan.Param{{Name: "concurrency", Value: int64(50)}}, u.Corner.Params)
	assert.Contains(t, u.Why, "its concurrency 50 is more than the 8 requests it sends")

	count := search.Param{Name: "request_count", Lo: 1, Hi: 60, Kind: search.KindInt}
	for name, s := range map[string]plan.Search{
		"a lower bound the count drives": undriven(8, 100, nil),
		"no request count":               undriven(50, 100, func(s *plan.Search) { s.Base.RequestCount = nil }),
		"a duration":                     undriven(50, 100, func(s *plan.Search) { s.Base.BenchmarkDuration = new(5.0) }),
		"a searched count that reaches it": undriven(50, 100, func(s *plan.Search) {
			s.Config.Space = append(s.Config.Space, count)
		}),
	} {
		_, ok, err := runner.UndrivenSpace(s)
		require.NoError(t, err, name)
		assert.False(t, ok, name)
	}
	count.Hi = 20
	s := undriven(50, 100, func(s *plan.Search) { s.Config.Space = append(s.Config.Space, count) })
	u, ok, err = runner.UndrivenSpace(s)
	require.NoError(t, err)
	require.True(t, ok, "no count of the space reaches its lowest load")
	assert.Equal(t, 50, u.Concurrency)
	assert.Equal(t, 20, u.Requests, "the corner nearest to driven")
}
