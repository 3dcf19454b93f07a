package report

import (
	"fmt"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// maxTurnRows bounds the rows of the TTFT-by-turn table; later turns share
// the last row.
const maxTurnRows = 20

// turns prints time to first token by turn index when the run replayed
// multi-turn sessions: how a growing history (and a prefix cache that
// holds it) shows in TTFT.
func (p *printer) turns(run *result.Run) {
	if !run.Config.Streaming {
		return
	}
	var byTurn [maxTurnRows][]float64
	multi := false
	for i := range run.Records {
		r := &run.Records[i]
		if r.PhaseKind != plan.KindProfiling || !r.OK() || r.ResponseNs.Len() == 0 || r.NotStreamed {
			continue
		}
		multi = multi || r.Turn > 0
		t := min(r.Turn, maxTurnRows-1)
		byTurn[t] = append(byTurn[t], float64(r.ResponseNs.First()-r.SentNs)/1e6)
	}
	if !multi {
		return
	}
	var rows [][]string
	for t, v := range byTurn {
		if len(v) == 0 {
			continue
		}
		label := strconv.Itoa(t)
		if t == maxTurnRows-1 {
			label = fmt.Sprintf("≥%d", t)
		}
		s := metrics.Compute(v)
		rows = append(rows, []string{label, strconv.Itoa(s.Count), number(s.Avg), number(s.P50), number(s.P99)})
	}
	p.section("Time to First Token by turn (ms)")
	p.table([]string{"Turn", "Requests", "avg", "p50", "p99"}, rows, "lrrrr")
}
