package dataset

import (
	"context"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkTraceLabOpen opens a gzipped corpus of 100,000 rounds in 1,000
// sessions (each round 4,000 to 100,000 tokens, most of it the previous
// round's prefix) and reports the heap it keeps per round: the rounds'
// counts, not hash ids (at 64 tokens a block the ids alone would be about
// 6 GB).
func BenchmarkTraceLabOpen(b *testing.B) {
	const sessions, rounds = 1000, 100
	rows := make([]map[string]any, 0, sessions*rounds)
	for r := range rounds {
		for s := range sessions {
			in := 4000 + r*960
			rows = append(rows, tlRow("claude:"+strconv.Itoa(s), r, float64(r*60+s), float64(r*60+s)+2, in, max(0, in-960), 300, nil))
		}
	}
	path := writeTL(b, "bench.jsonl.gz", rows)
	rows = nil
	tok := o200k(b)
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d, err := Open(context.Background(), tok, Options{InputFile: path})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(sessions*rounds), "heap-B/round")
		runtime.KeepAlive(d)
	}
}
