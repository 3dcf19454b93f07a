package search

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// respondFunc is a synthetic server: the statistics of one trial at a point.
// probe and trial count from 0; a deterministic function of its arguments.
type respondFunc func(pt Point, probe, trial int) Trial

// drive runs s against respond until it stops, as the runner would: each
// Step's trials are appended to its probe. It fails the test past 500 steps.
func drive(t *testing.T, s *Search, respond respondFunc) (History, Step) {
	t.Helper()
	var h History
	for range 500 {
		step, err := s.Next(h)
		require.NoError(t, err)
		if step.Stop {
			return h, step
		}
		if step.Probe == len(h.Probes) {
			h.Probes = append(h.Probes, Probe{Point: step.Point})
		}
		require.Less(t, step.Probe, len(h.Probes))
		p := &h.Probes[step.Probe]
		require.True(t, p.Point.Equal(step.Point))
		for range step.Trials {
			p.Trials = append(p.Trials, respond(p.Point, step.Probe, len(p.Trials)))
		}
	}
	t.Fatal("the search did not stop in 500 steps")
	return h, Step{}
}

// ttftAt is a server whose TTFT p95 is f(concurrency) exactly, with output
// throughput rising with concurrency.
func ttftAt(f func(c float64) float64) respondFunc {
	return func(pt Point, _, _ int) Trial {
		c := pt[0]
		return Trial{OK: true, Values: map[string]float64{
			"time_to_first_token.p95":     f(c),
			"output_token_throughput.avg": 100 * c / (1 + c/50),
		}}
	}
}

// noisyTTFT is ttftAt with Gaussian noise of sd sigma, seeded per (seed,
// probe, trial).
func noisyTTFT(f func(c float64) float64, sigma float64, seed uint64) respondFunc {
	return func(pt Point, probe, trial int) Trial {
		rng := rand.New(rand.NewPCG(seed, uint64(probe)<<16|uint64(trial)))
		tr := ttftAt(f)(pt, probe, trial)
		tr.Values["time_to_first_token.p95"] += sigma * rng.NormFloat64()
		return tr
	}
}

// slaConfig is max-concurrency-under-sla over [1, hi] with TTFT p95 < thr.
func slaConfig(planner string, hi, thr float64, rule TrialRule) Config {
	return Config{
		Planner:   planner,
		Space:     Space{{Name: "concurrency", Path: "phases.profiling.concurrency", Lo: 1, Hi: hi, Kind: KindInt}},
		Objective: Objective{Metric: "output_token_throughput", Stat: "avg", Direction: Maximize},
		Filters:   []Filter{{Metric: "time_to_first_token", Stat: "p95", Op: "lt", Threshold: thr}},
		Trials:    rule,
	}
}

// boundaryAt is a TTFT curve that meets an 80 ms SLA up to concurrency b
// and breaks it from b+1.
func boundaryAt(b float64) func(float64) float64 {
	return func(c float64) float64 { return 80 * c / (b + 0.5) }
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
