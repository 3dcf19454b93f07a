package traceanalysis

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aiperf-go/aiperf/internal/cachesim"
)

// conversationTrace writes a mooncake trace of rows lines shaped like a
// production conversation trace (512-token blocks): 40% of the rows
// continue one of the last 1,000 conversations (its whole history, then 1
// to 4 new blocks), the others start one behind one of 100 system prompts
// of 1 to 4 blocks, with 2 to 20 blocks of their own; a conversation
// restarts past 64 blocks. Timestamps advance 0 to 19 ms a row.
func conversationTrace(tb testing.TB, path string, rows int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(3, 4))
	recent := make([][]int64, 1000)
	next, ts := int64(1000), int64(0)
	var b []byte
	for i := range rows {
		var ids []int64
		if prev := recent[r.IntN(len(recent))]; prev != nil && len(prev) < 60 && r.IntN(10) < 4 {
			ids = append(ids, prev...)
		} else {
			root := int64(r.IntN(100)) * 4
			for k := range 1 + r.IntN(4) {
				ids = append(ids, root+int64(k))
			}
			for range 1 + r.IntN(16) {
				ids = append(ids, next)
				next++
			}
		}
		for range 1 + r.IntN(4) {
			ids = append(ids, next)
			next++
		}
		recent[i%len(recent)] = ids
		ts += int64(r.IntN(20))
		b = append(b[:0], `{"timestamp": `...)
		b = strconv.AppendInt(b, ts, 10)
		b = append(b, `, "input_length": `...)
		b = strconv.AppendInt(b, int64(len(ids)*512-r.IntN(512)), 10)
		b = append(b, `, "output_length": `...)
		b = strconv.AppendInt(b, int64(50+r.IntN(750)), 10)
		b = append(b, `, "hash_ids": [`...)
		for k, id := range ids {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, id, 10)
		}
		b = append(b, "]}\n"...)
		if _, err := w.Write(b); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// peakHeap samples the live heap every 5 ms until stop is called, and
// returns the largest sample.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// BenchmarkAnalyze analyses a 1,000,000-line trace (and simulates a
// 1G-token cache of 512-token blocks on it): the file streamed twice, the peak heap a few bytes
// per request and per distinct block.
func BenchmarkAnalyze(b *testing.B) {
	const rows = 1_000_000
	path := filepath.Join(b.TempDir(), "trace.jsonl")
	conversationTrace(b, path, rows)
	st, _ := os.Stat(path)
	for _, sim := range []bool{false, true} {
		name := "analysis"
		o := Options{BlockSize: 512}
		if sim {
			name = "with-simulation"
			o.Simulate = &cachesim.Config{HashBlockSize: 512, CacheBlockSize: 512, CapacityTokens: 1 << 30}
		}
		b.Run(name, func(b *testing.B) {
			var r *Report
			var peak uint64
			for b.Loop() {
				runtime.GC()
				stop := peakHeap()
				var err error
				if r, err = Analyze(context.Background(), path, o); err != nil {
					b.Fatal(err)
				}
				peak = max(peak, stop())
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
			b.ReportMetric(float64(r.UniquePrefixes)/1e6, "M-prefixes")
			b.ReportMetric(float64(peak)/float64(r.UniquePrefixes), "heap-B/prefix")
		})
	}
}
