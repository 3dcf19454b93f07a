package report

import (
	"io"
	"testing"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
)

// BenchmarkWriteJSONL100k measures the per-request export of a 100,000
// request streaming run with 16 chunks per request.
func BenchmarkWriteJSONL100k(b *testing.B) {
	run := &result.Run{Records: make([]metrics.Record, 100_000)}
	run.Config.Streaming = true
	for i := range run.Records {
		chunks := make([]int64, 16)
		for j := range chunks {
			chunks[j] = int64(i)*msNs + int64(40+4*j)*msNs
		}
		run.Records[i] = streamed(i, int64(i), 256, chunks...)
		run.Records[i].ResponseNs = metrics.StampsOf(chunks...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteJSONL(io.Discard, run); err != nil {
			b.Fatal(err)
		}
	}
}
