package load

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// BenchmarkPacing measures the scheduler alone: how late a credit's goroutine
// starts against its absolute send time, at 1,000 and 5,000 req/s, with
// default and precise pacing. The sender does no I/O, so this is the floor
// under the send lag an HTTP run records. Reported as µs percentiles.
func BenchmarkPacing(b *testing.B) {
	for _, rate := range []float64{1000, 5000} {
		for _, precise := range []bool{false, true} {
			b.Run(fmt.Sprintf("rate=%g/precise=%v", rate, precise), func(b *testing.B) {
				var mu sync.Mutex
				var lags []float64
				clock := NewClock()
				e := &Engine{Clock: clock, Precise: precise,
					Source: SingleTurn(func(_ context.Context, c Credit) metrics.Record {
						return metrics.Record{ScheduledNs: c.ScheduledNs, SentNs: clock.Now()}
					}),
					OnRecord: func(r metrics.Record) {
						mu.Lock()
						lags = append(lags, float64(r.SentNs-r.ScheduledNs)/1e3)
						mu.Unlock()
					},
				}
				n := max(b.N, int(rate)) // at least one second of sends
				b.ResetTimer()
				_, err := e.Run(context.Background(), []plan.Phase{{Name: "p", Kind: plan.KindProfiling,
					Rate: rate, RateMode: plan.RateConstant, Requests: n}})
				if err != nil {
					b.Fatal(err)
				}
				slices.Sort(lags)
				b.ReportMetric(lags[len(lags)/2], "lag_p50_µs")
				b.ReportMetric(lags[len(lags)*99/100], "lag_p99_µs")
				b.ReportMetric(lags[len(lags)-1], "lag_max_µs")
			})
		}
	}
}
