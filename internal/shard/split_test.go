package shard

import (
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/plan"
)

func TestShareGivesTheRemainderToTheFirst(t *testing.T) {
	var got []int
	for i := range 4 {
		got = append(got, Share(10, 4, i))
	}
	assert.Equal(t, []int{3, 3, 2, 2}, got)
	assert.Equal(t, 0, Share(0, 4, 1), "0 (no limit) stays 0")
}

func TestSplitSharesEveryQuantity(t *testing.T) {
	phases := []plan.Phase{
		{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 5, Requests: 7, GracePeriod: -1},
		{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 10, Requests: 103, Sessions: 9, PrefillConcurrency: 6, Duration: 30},
	}
	shares, err := Split(phases, 4)
	require.NoError(t, err)
	require.Len(t, shares, 4)
	sum := plan.Phase{}
	for i, s := range shares {
		require.Len(t, s, 2)
		p := s[1]
		assert.Equal(t, 30.0, p.Duration, "every worker keeps the duration")
		assert.Equal(t, -1.0, s[0].GracePeriod)
		assert.Equal(t, "profiling", p.Name)
		sum.Concurrency += p.Concurrency
		sum.Requests += p.Requests
		sum.Sessions += p.Sessions
		sum.PrefillConcurrency += p.PrefillConcurrency
		if i == 0 {
			assert.Equal(t, []int{3, 26, 3, 2}, []int{p.Concurrency, p.Requests, p.Sessions, p.PrefillConcurrency})
		}
		if i == 3 {
			assert.Equal(t, []int{2, 25, 2, 1}, []int{p.Concurrency, p.Requests, p.Sessions, p.PrefillConcurrency})
		}
	}
	assert.Equal(t, []int{10, 103, 9, 6}, []int{sum.Concurrency, sum.Requests, sum.Sessions, sum.PrefillConcurrency})
}

func TestSplitRefusesMoreWorkersThanAShare(t *testing.T) {
	for _, c := range []struct {
		ph   plan.Phase
		want string
	}{
		{plan.Phase{Name: "profiling", Concurrency: 3}, "--workers 4 is more than the profiling phase's concurrency 3"},
		{plan.Phase{Name: "warmup", Concurrency: 8, Requests: 2}, "--workers 4 is more than the warmup phase's request count 2"},
		{plan.Phase{Name: "p", Rate: 10, Concurrency: 8, PrefillConcurrency: 1}, "prefill concurrency 1: every worker needs a share of it; use at most 1 workers"},
		{plan.Phase{Name: "profiling", Rate: 1.5, Duration: 2}, "--workers 4 leaves a worker less than one of the 3 requests the profiling phase sends (1.5/s for 2 s): every worker needs a share of them; use at most 3 workers"},
		// Under a cap the rate follows the cap's split (2, 2, 2, 1 of 7):
		// the last worker's part of 4 requests is 4/7.
		{plan.Phase{Name: "profiling", Rate: 1, Duration: 4, Concurrency: 7}, "--workers 4 leaves a worker less than one of the 4 requests the profiling phase sends (1/s for 4 s): every worker needs a share of them; use at most 3 workers"},
	} {
		_, err := Split([]plan.Phase{c.ph}, 4)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
	_, err := Split(nil, 0)
	assert.ErrorContains(t, err, "--workers must be at least 1, got 0")
	_, err = Split([]plan.Phase{{Name: "profiling", Rate: 3, Duration: 1}}, 3)
	assert.NoError(t, err, "3 requests for 3 workers")
	_, err = Split([]plan.Phase{{Name: "profiling", Rate: 1, Duration: 1, Requests: 8}}, 4)
	assert.NoError(t, err, "a request count is shared out exactly, whatever the rate")
}

// TestSplitRefusesAMillionWorkers: a worker count beyond MaxWorkers is
// refused before anything is allocated for it, whatever the load.
func TestSplitRefusesAMillionWorkers(t *testing.T) {
	phases := []plan.Phase{{Name: "profiling", Rate: 1e9, Duration: 3600}} // no bound a worker count could exceed
	var err error
	allocs := testing.AllocsPerRun(10, func() { _, err = Split(phases, 1_000_000) })
	assert.ErrorContains(t, err, "--workers 1000000 is more than 256, the most a cell may have")
	assert.Less(t, allocs, 10.0, "the error's, nothing per worker")
	_, err = Split(phases, MaxWorkers)
	assert.NoError(t, err)
}

// TestConstantRateMerges checks that the workers' constant schedules,
// offset by i/rate, merge into the constant schedule of one process:
// every send at exactly j/rate, none twice, with the request count split.
func TestConstantRateMerges(t *testing.T) {
	const rate, n, w = 40.0, 103, 4
	one := load.NewSchedule(plan.Phase{Rate: rate, RateMode: plan.RateConstant}, 1)
	var want []int64
	for range n {
		want = append(want, one.Next())
	}
	shares, err := Split([]plan.Phase{{Name: "profiling", Rate: rate, RateMode: plan.RateConstant, Requests: n}}, w)
	require.NoError(t, err)
	var got []int64
	for i, s := range shares {
		ph := s[0]
		assert.Equal(t, rate/w, ph.Rate)
		assert.InDelta(t, float64(i)/rate, ph.Offset, 1e-12)
		sched := load.NewSchedule(ph, int64(i))
		for range ph.Requests {
			got = append(got, sched.Next())
		}
	}
	slices.Sort(got)
	for j := range want {
		assert.InDelta(t, want[j], got[j], 1, "send %d", j) // ns rounding of two computations
	}
}

func TestPoissonAndGammaAreNotOffset(t *testing.T) {
	for _, mode := range []string{plan.RatePoisson, plan.RateGamma} {
		shares, err := Split([]plan.Phase{{Name: "p", Rate: 8, RateMode: mode}}, 4)
		require.NoError(t, err)
		for _, s := range shares {
			assert.Equal(t, 2.0, s[0].Rate)
			assert.Zero(t, s[0].Offset, mode)
		}
	}
}

type seq struct{ i int }

func (s *seq) Next() int { s.i++; return s.i - 1 }

// TestStridePartitions checks that the workers' draws of one sequence are
// exactly its first n draws when n is shared out.
func TestStridePartitions(t *testing.T) {
	const n, w = 23, 4
	var got []int
	for i := range w {
		s := Stride(&seq{}, i, w)
		for range Share(n, w, i) {
			got = append(got, s.Next())
		}
	}
	slices.Sort(got)
	want := make([]int, n)
	for j := range want {
		want[j] = j
	}
	assert.Equal(t, want, got)
	s := Stride(&seq{}, 2, 4)
	assert.Equal(t, []int{2, 6, 10}, []int{s.Next(), s.Next(), s.Next()})
}

func TestMineDealsRoundRobin(t *testing.T) {
	var got [3][]int
	for j := range 8 {
		for i := range 3 {
			if Mine(j, i, 3) {
				got[i] = append(got[i], j)
			}
		}
	}
	assert.Equal(t, [3][]int{{0, 3, 6}, {1, 4, 7}, {2, 5}}, got)
	assert.True(t, Mine(5, 0, 1))
}

func TestSplitDealsUsersKeepingEachUsersGap(t *testing.T) {
	shares, err := Split([]plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Users: 10, Rate: 4, Duration: 60}}, 4)
	require.NoError(t, err)
	var users int
	var rate float64
	for _, s := range shares {
		p := s[0]
		users += p.Users
		rate += p.Rate
		assert.InDelta(t, 10.0/4, float64(p.Users)/p.Rate, 1e-12, "a user's turns stay users/rate apart")
	}
	assert.Equal(t, 10, users)
	assert.InDelta(t, 4.0, rate, 1e-12)

	_, err = Split([]plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Users: 3, Rate: 4}}, 4)
	assert.ErrorContains(t, err, "user count 3")
}

// A worker's sessions start on several goroutines at once: each still
// takes one of the worker's own draws (skips and draw are one step).
func TestStrideUnderConcurrentDraws(t *testing.T) {
	const goroutines, each, w = 8, 50, 4
	s := Stride(&lockedSeq{}, 1, w)
	got := make(chan int, goroutines*each)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				got <- s.Next()
			}
		})
	}
	wg.Wait()
	close(got)
	var draws []int
	for d := range got {
		draws = append(draws, d)
	}
	slices.Sort(draws)
	for k, d := range draws {
		require.Equal(t, 1+k*w, d, "draw %d", k)
	}
}

// lockedSeq draws 0, 1, 2, ... and may be called from several goroutines,
// as dataset.Sampler.
type lockedSeq struct {
	mu sync.Mutex
	n  int
}

func (s *lockedSeq) Next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.n - 1
}

// TestRateWithACapSplitsByCapShare: with a rate and an in-flight cap, each
// worker's rate, request count and session count are its part of the cap's,
// so every worker sends as many requests per slot as one process would.
func TestRateWithACapSplitsByCapShare(t *testing.T) {
	shares, err := Split([]plan.Phase{{Name: "profiling", Rate: 12, RateMode: plan.RateConstant, Concurrency: 3,
		Requests: 10, Sessions: 7}}, 2)
	require.NoError(t, err)
	var got [][]float64
	for _, s := range shares {
		p := s[0]
		got = append(got, []float64{float64(p.Concurrency), p.Rate, float64(p.Requests), float64(p.Sessions)})
		assert.InDelta(t, 4.0, p.Rate/float64(p.Concurrency), 1e-12, "one process's 12/s over 3 slots")
	}
	assert.Equal(t, [][]float64{{2, 8, 7, 5}, {1, 4, 3, 2}}, got)

	shares, err = Split([]plan.Phase{{Name: "profiling", Rate: 12, RateMode: plan.RateConstant, Concurrency: 4, Requests: 10}}, 2)
	require.NoError(t, err)
	for i, s := range shares {
		assert.Equal(t, 6.0, s[0].Rate, "a cap the workers divide splits the rate evenly")
		assert.Equal(t, 5, s[0].Requests)
		assert.InDelta(t, float64(i)/12, s[0].Offset, 1e-12)
	}
}

func TestCapShareDealsRoundsOfTheCap(t *testing.T) {
	for c := 1; c <= 12; c++ {
		for w := 1; w <= c; w++ {
			for n := range 60 {
				sum := 0
				for i := range w {
					s := CapShare(n, c, w, i)
					sum += s
					if c%w == 0 {
						assert.Equal(t, Share(n, w, i), s, "n %d c %d w %d: equal parts of the cap are Share", n, c, w)
					}
					if n >= w {
						assert.Positive(t, s, "n %d c %d w %d: every worker gets some", n, c, w)
					}
				}
				assert.Equal(t, n, sum, "n %d c %d w %d", n, c, w)
			}
		}
	}
}
