package plot

import (
	"math"
	"slices"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// CDF is the distribution of TTFT and of ITL per request: a panel each, a
// line per run (or group, or sweep) in each.
type CDF struct {
	Name   string     `json:"name"`
	Title  string     `json:"title"`
	Panels []CDFPanel `json:"panels"`
}

// CDFPanel is one metric's lines.
type CDFPanel struct {
	Label string    `json:"label"` // x axis title
	Lines []CDFLine `json:"lines"`
}

// CDFLine is an empirical distribution: P[i] of the requests took at most
// X[i] (ms), X increasing, the last P 1.
type CDFLine struct {
	Name string    `json:"name"`
	X    []float64 `json:"x"`
	P    []float64 `json:"p"`
}

// maxCDFPoints bounds a line's points: a million requests draw as fast as
// a hundred, and the SVG stays small.
const maxCDFPoints = 200

// requestTimes are the TTFT and ITL (ms) of a run's successful streamed
// profiling requests, as their time_to_first_token and inter_token_latency
// metrics hold them (metrics.Times).
func requestTimes(runs []*result.Run) (ttft, itl []float64) {
	for _, r := range runs {
		streams := r.Config.Streams()
		for i := range r.Records {
			rec := &r.Records[i]
			if rec.PhaseKind != plan.KindProfiling || !rec.OK() || rec.NoTokens {
				continue
			}
			t := metrics.Times(rec, streams)
			if !t.Streamed {
				continue
			}
			ttft = append(ttft, float64(t.TTFTNs)/1e6)
			if t.HasITL {
				itl = append(itl, t.ITLNs/1e6)
			}
		}
	}
	return ttft, itl
}

// cdfLine is the empirical CDF of values, at most maxPoints points (evenly
// spaced ranks, the smallest and the largest always kept).
func cdfLine(name string, values []float64, maxPoints int) CDFLine {
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	n := len(sorted)
	line := CDFLine{Name: name}
	if n == 0 {
		return line
	}
	m := min(n, max(2, maxPoints))
	for k := range m {
		i := k
		if m < n {
			i = int(math.Round(float64(k) * float64(n-1) / float64(m-1)))
		}
		line.X = append(line.X, sorted[i])
		line.P = append(line.P, float64(i+1)/float64(n))
	}
	return line
}

// times are a set's TTFTs and ITLs (ms), a CDF line each.
type times struct{ ttft, itl []float64 }

// cdfOf builds the TTFT and ITL CDFs of named sets of runs (a line per set);
// none when no set has a streamed request.
func cdfOf(name, title string, names []string, sets [][]*result.Run) *CDF {
	ts := make([]times, len(sets))
	for i, runs := range sets {
		ts[i].ttft, ts[i].itl = requestTimes(runs)
	}
	return cdfOfTimes(name, title, names, ts)
}

// cdfOfTimes builds the TTFT and ITL CDFs of named sets of times.
func cdfOfTimes(name, title string, names []string, sets []times) *CDF {
	c := &CDF{Name: name, Title: title, Panels: []CDFPanel{{Label: "TTFT (ms)"}, {Label: "ITL (ms)"}}}
	found := false
	for i, t := range sets {
		found = found || len(t.ttft) > 0
		c.Panels[0].Lines = append(c.Panels[0].Lines, cdfLine(names[i], t.ttft, maxCDFPoints))
		c.Panels[1].Lines = append(c.Panels[1].Lines, cdfLine(names[i], t.itl, maxCDFPoints))
	}
	if !found {
		return nil
	}
	return c
}
