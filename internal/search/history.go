package search

import (
	"math"

	"github.com/aiperf-go/aiperf/internal/stats"
)

// Trial is one run of a probe as the store keeps it: whether the cell
// produced results, and its statistics keyed "metric.stat" (Config.Keys
// lists the ones a search reads). A failed trial counts as spent but adds
// no evidence.
type Trial struct {
	OK     bool               `json:"ok"`
	Values map[string]float64 `json:"values,omitempty"`
}

// Probe is one iteration of a search: a point and the trials run at it, in
// order. Its index in History.Probes is AIPerf's iteration_idx.
type Probe struct {
	Point  Point   `json:"point"`
	Trials []Trial `json:"trials"`
}

// History is every probe of a search so far, in the order they were run.
type History struct {
	Probes []Probe `json:"probes"`
}

// TrialsSpent counts every trial run, failed ones included.
func (h History) TrialsSpent() int {
	n := 0
	for _, p := range h.Probes {
		n += len(p.Trials)
	}
	return n
}

// values is the finite values of key over the probe's successful trials.
func (p Probe) values(key string) []float64 {
	var out []float64
	for _, t := range p.Trials {
		if !t.OK {
			continue
		}
		if v, ok := t.Values[key]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

// mean is the mean of key over the probe's successful trials (NaN when
// none measured it): AIPerf's objective_value, the mean of per-trial stats.
func (p Probe) mean(key string) float64 { return stats.Mean(p.values(key)) }
