package plottest

import (
	"fmt"
	"math/rand/v2"

	"github.com/aiperf-go/aiperf/internal/search"
)

// Respond is a synthetic server's statistics ("metric.stat" keys) for one
// trial: at the point's values by parameter name (concurrency,
// synthetic_input_tokens_mean, ...), of probe and trial counted from 0.
type Respond func(at map[string]float64, probe, trial int) map[string]float64

// Drive runs a search with the real planner against respond until it
// stops, as the runner does (each step's trials appended to its probe), and
// returns the history and its search_history.json.
func Drive(cfg search.Config, respond Respond) (search.History, search.HistoryDoc, error) {
	s, err := search.New(cfg)
	if err != nil {
		return search.History{}, search.HistoryDoc{}, err
	}
	space := s.Config().Space
	var h search.History
	for range 1000 {
		step, err := s.Next(h)
		if err != nil {
			return h, search.HistoryDoc{}, err
		}
		if step.Stop {
			return h, s.Document(h, step.Reason), nil
		}
		if step.Probe == len(h.Probes) {
			h.Probes = append(h.Probes, search.Probe{Point: step.Point})
		}
		p := &h.Probes[step.Probe]
		at := map[string]float64{}
		for i, param := range space {
			at[param.Name] = p.Point[i]
		}
		for range step.Trials {
			p.Trials = append(p.Trials, search.Trial{OK: true, Values: respond(at, step.Probe, len(p.Trials))})
		}
	}
	return h, search.HistoryDoc{}, fmt.Errorf("the search did not stop in 1000 steps")
}

// TTFTBoundary is a server whose TTFT p95 is msPerSeq·concurrency plus
// Gaussian noise of sd noiseMs per trial (seeded per probe and trial), and
// whose output token throughput is 100·c/(1 + c/50).
func TTFTBoundary(msPerSeq, noiseMs float64, seed uint64) Respond {
	return func(at map[string]float64, probe, trial int) map[string]float64 {
		rng := rand.New(rand.NewPCG(seed, uint64(probe)<<16|uint64(trial)))
		c := at["concurrency"]
		return map[string]float64{
			"time_to_first_token.p95":     msPerSeq*c + noiseMs*rng.NormFloat64(),
			"output_token_throughput.avg": 100 * c / (1 + c/50) * (1 + 0.01*rng.NormFloat64()),
		}
	}
}

// SLASearch is max-concurrency-under-sla over concurrency [1, hi] with
// TTFT p95 < slaMs, trials trials a probe and up to replicates while a
// verdict is ambiguous.
func SLASearch(planner string, hi, slaMs float64, trials, replicates int) search.Config {
	return search.Config{
		Recipe:    search.RecipeMaxConcurrency,
		Planner:   planner,
		Space:     search.Space{{Name: "concurrency", Path: "phases.profiling.concurrency", Lo: 1, Hi: hi, Kind: search.KindInt}},
		Objective: search.Objective{Metric: "output_token_throughput", Stat: "avg", Direction: search.Maximize},
		Filters:   []search.Filter{{Metric: "time_to_first_token", Stat: "p95", Op: "lt", Threshold: slaMs}},
		Trials:    search.TrialRule{Min: trials, Max: replicates},
	}
}

// NoisySLASearch is the figures' example search: max-concurrency-under-sla
// (monotonic) over [1, 1000] against TTFT p95 = 10·c ms with 6 ms of noise
// per trial and an 85 ms SLA (8 passes, 9 fails, on average), 3 trials a
// probe and up to 5 while ambiguous. It probes 1, 2, 4, 8, 16, 6, 12, 10, 7,
// 9 and ends with 7 passed, 8 and 9 ambiguous, 10 failed.
func NoisySLASearch() (search.History, search.HistoryDoc, error) {
	return Drive(SLASearch(search.PlannerMonotonic, 1000, 85, 3, 5), TTFTBoundary(10, 6, 1))
}
