package metrics

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchRecords builds n streamed records of chunks responses each, with
// jittered timings so the sorts do real work.
func benchRecords(n, chunks int) []Record {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]Record, n)
	resp := make([]int64, n*chunks)
	for i := range recs {
		sent := int64(i) * 100_000
		r := resp[i*chunks : (i+1)*chunks : (i+1)*chunks]
		t := sent + 40*msNs + rng.Int64N(10*msNs)
		for j := range r {
			r[j] = t
			t += 4*msNs + rng.Int64N(msNs)
		}
		recs[i] = Record{
			ScheduledNs: sent, SentNs: sent + rng.Int64N(msNs), ResponseNs: StampsOf(r...), EndNs: t,
			InputTokens: 256 + rng.IntN(64), OutputTokens: chunks,
			Usage: &Usage{PromptTokens: 256, CompletionTokens: chunks},
		}
		if i%100 == 0 {
			recs[i].Error = &Error{Code: 500, Type: "HTTPError", Message: "Internal Server Error"}
		}
	}
	return recs
}

func BenchmarkSummarize1M(b *testing.B) {
	recs := benchRecords(1_000_000, 8)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Summarize(recs, true)
	}
}

// BenchmarkSummarize100kStreams is 100k requests of 64 chunks: 6.3M
// inter-chunk latencies.
func BenchmarkSummarize100kStreams(b *testing.B) {
	recs := benchRecords(100_000, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Summarize(recs, true)
	}
}

func BenchmarkCompute100k(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	v := make([]float64, 100_000)
	for i := range v {
		v[i] = rng.ExpFloat64()
	}
	b.ReportAllocs()
	for b.Loop() {
		Compute(v)
	}
}

// BenchmarkErrors groups a run's worth of connection resets, each from its
// own local port.
func BenchmarkErrors(b *testing.B) {
	recs := make([]Record, 10_000)
	for i := range recs {
		recs[i].Error = &Error{Type: "IncompleteStream",
			Message: fmt.Sprintf("read tcp 127.0.0.1:%d->127.0.0.1:8000: read: connection reset by peer", 30000+i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(Errors(recs)) != 1 {
			b.Fatal("not grouped")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/error")
}
