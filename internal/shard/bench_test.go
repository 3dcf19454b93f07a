package shard

import (
	"io"
	"testing"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// BenchmarkRecordLine measures one finished record's way from a worker to
// the coordinator: encoded as its line, read back through a pipe, decoded
// and moved onto the coordinator's clock (a streamed record of 64 chunks).
func BenchmarkRecordLine(b *testing.B) {
	rec := metrics.Record{Index: 7, Phase: "profiling", PhaseKind: "profiling", RequestID: "0123abcd-000007", Model: "m",
		Streaming: true, Conversation: "conv-3", CorrelationID: "0123abcd-s000007", ScheduledNs: 1e9, SentNs: 1e9 + 5e4,
		EndNs: 1e9 + 4e8, InputTokens: 550, OutputTokens: 64, Status: 200,
		ResponseNs: metrics.StampsFrom(64, func(i int) int64 { return 1e9 + 2e7 + int64(i)*5e6 + int64(i%7)*1e3 }),
		Usage:      &metrics.Usage{PromptTokens: 550, CompletionTokens: 64, TotalTokens: new(614)}}
	pr, pw := io.Pipe()
	w := NewConn(nil, pw)
	r := NewConn(pr, nil)
	recs := make([]metrics.Record, 64)
	for i := range recs {
		recs[i] = rec
	}
	go func() {
		for sent := 0; sent < b.N; sent += len(recs) {
			_ = (&Worker{conn: w}).Add(recs[:min(len(recs), b.N-sent)])
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m, err := r.Recv()
		if err != nil {
			b.Fatal(err)
		}
		m.Record.Shift(12345)
	}
}
