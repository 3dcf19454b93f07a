package dataset

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// BenchmarkPublicIndex opens a 200,000-record aimo file (~60 MB of
// problems) as JSON Lines and as Parquet, and reports the heap the open
// dataset holds per record: the index, not the records' text.
func BenchmarkPublicIndex(b *testing.B) {
	const records = 200_000
	problem := strings.Repeat("Find every real x such that x squared exceeds the sum of its digits. ", 4)
	dir := b.TempDir()
	jsonl := filepath.Join(dir, "aimo.jsonl")
	f, err := os.Create(jsonl)
	require.NoError(b, err)
	w := bufio.NewWriter(f)
	type row struct {
		Problem  string `parquet:"problem"`
		Solution string `parquet:"solution"`
	}
	rows := make([]row, 0, records)
	for i := range records {
		p := fmt.Sprintf("%d. %s", i, problem)
		fmt.Fprintf(w, "{\"problem\": %q, \"solution\": \"42\"}\n", p)
		rows = append(rows, row{p, "42"})
	}
	require.NoError(b, w.Flush())
	require.NoError(b, f.Close())
	pq := filepath.Join(dir, "aimo.parquet")
	require.NoError(b, parquet.WriteFile(pq, rows, parquet.PageBufferSize(1<<20)))
	rows = nil
	tok := o200k(b)
	for _, path := range []string{jsonl, pq} {
		st, err := os.Stat(path)
		require.NoError(b, err)
		b.Run(filepath.Ext(path)[1:], func(b *testing.B) {
			var held float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				d, err := Open(context.Background(), tok, Options{InputFile: path, PublicDataset: PublicAIMO})
				require.NoError(b, err)
				runtime.GC()
				runtime.ReadMemStats(&after)
				require.Equal(b, records, d.Len())
				held = float64(after.HeapAlloc) - float64(before.HeapAlloc)
				d.Close()
			}
			b.ReportMetric(held/records, "heap-B/record")
			b.ReportMetric(float64(st.Size())/records, "file-B/record")
			b.ReportMetric(float64(st.Size())*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
		})
	}
}

// BenchmarkPublicParquetRandomRead reads the records of a Parquet file of
// one row group back in random order, as a random sampler replays them, at
// two sizes: the time per record must not grow with the file's rows
// (finding a row by reading its row group from the start made it grow
// linearly, and the replay quadratic).
func BenchmarkPublicParquetRandomRead(b *testing.B) {
	type row struct {
		Problem string `parquet:"problem"`
	}
	tok := o200k(b)
	for _, records := range []int{5_000, 40_000} {
		rows := make([]row, records)
		for i := range rows {
			rows[i].Problem = fmt.Sprintf("%d. Find every real x such that x squared exceeds the sum of its digits.", i)
		}
		pq := filepath.Join(b.TempDir(), "aimo.parquet")
		require.NoError(b, parquet.WriteFile(pq, rows, parquet.PageBufferSize(1<<20)))
		d, err := Open(context.Background(), tok, Options{InputFile: pq, PublicDataset: PublicAIMO})
		require.NoError(b, err)
		order := rand.New(rand.NewPCG(1, 2)).Perm(records)
		b.Run(fmt.Sprintf("rows=%d", records), func(b *testing.B) {
			k := 0
			for b.Loop() {
				_, err := d.Conversation(order[k%records])
				require.NoError(b, err)
				k++
			}
		})
		d.Close()
	}
}
