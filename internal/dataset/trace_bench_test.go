package dataset

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTrace writes a mooncake trace of rows lines like the public
// conversation trace: input lengths around isl, 512-token blocks, each row
// sharing a prefix of 0 to 8 blocks with one of 1,000 earlier roots, the
// rest of its blocks its own; timestamps 0, 10, 20, … ms.
func writeTrace(tb testing.TB, path string, rows, isl int) {
	tb.Helper()
	f, err := os.Create(path)
	require.NoError(tb, err)
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	next := int64(1_000_000)
	var b []byte
	for i := range rows {
		length := max(1, isl/2+r.IntN(isl+1))
		blocks := (length + 511) / 512
		shared := min(blocks-1, r.IntN(9))
		root := int64(r.IntN(1000)) * 16
		b = append(b[:0], `{"timestamp": `...)
		b = strconv.AppendInt(b, int64(i)*10, 10)
		b = append(b, `, "input_length": `...)
		b = strconv.AppendInt(b, int64(length), 10)
		b = append(b, `, "output_length": 300, "hash_ids": [`...)
		for k := range blocks {
			if k > 0 {
				b = append(b, ", "...)
			}
			if k < shared {
				b = strconv.AppendInt(b, root+int64(k), 10)
			} else {
				b = strconv.AppendInt(b, next, 10)
				next++
			}
		}
		b = append(b, "]}\n"...)
		_, err = w.Write(b)
		require.NoError(tb, err)
	}
	require.NoError(tb, w.Flush())
	require.NoError(tb, f.Close())
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func TestIndexIsCompact(t *testing.T) {
	const rows = 20_000
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	writeTrace(t, path, rows, 8000)
	d, err := Open(context.Background(), o200k(t), Options{InputFile: path, FixedSchedule: true})
	require.NoError(t, err)
	defer d.Close()
	fd := d.(*fileDataset)
	require.Equal(t, rows, d.Len())
	perRow := float64(fd.indexBytes()) / rows
	t.Logf("index: %.1f bytes per row", perRow)
	assert.LessOrEqual(t, perRow, 32.0, "offset, length, first line and start time")
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Less(t, fd.indexBytes(), int(st.Size())/3, "the index is a fraction of the file")
}

// BenchmarkTraceReplay opens a 100,000-line trace (ISL ~8k, 512-token
// blocks with shared prefixes) and synthesises the prompt of every line,
// as a replay does. It reports the index's size and the live heap per row
// after the open.
func BenchmarkTraceReplay(b *testing.B) {
	const rows = 100_000
	path := filepath.Join(b.TempDir(), "trace.jsonl")
	writeTrace(b, path, rows, 8000)
	tok := o200k(b)
	if _, err := blockWords(tok); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	var tokens int64
	for b.Loop() {
		before := heapInUse()
		start := time.Now()
		d, err := Open(context.Background(), tok, Options{InputFile: path, FixedSchedule: true, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "open-s")
		after := heapInUse()
		tokens = 0
		for i := range d.Len() {
			c, err := d.Conversation(i)
			if err != nil {
				b.Fatal(err)
			}
			tokens += int64(c.Turns[0].InputTokens)
		}
		b.ReportMetric(float64(d.(*fileDataset).indexBytes())/rows, "index-B/row")
		b.ReportMetric(float64(after-before)/rows, "heap-B/row")
		d.Close()
	}
	b.ReportMetric(float64(tokens*int64(b.N))/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(float64(st.Size())/rows, "file-B/row")
}

// BenchmarkIndex opens (indexes and checks) traces of growing size without
// reading any conversation back: the live heap per row stays flat.
func BenchmarkIndex(b *testing.B) {
	tok := o200k(b)
	for _, rows := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "trace.jsonl")
			writeTrace(b, path, rows, 8000)
			st, _ := os.Stat(path)
			for b.Loop() {
				before := heapInUse()
				d, err := Open(context.Background(), tok, Options{InputFile: path, FixedSchedule: true})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(heapInUse()-before)/float64(rows), "heap-B/row")
				d.Close()
			}
			b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
			b.ReportMetric(float64(st.Size()*int64(b.N))/(1<<20)/b.Elapsed().Seconds(), "MiB/s")
		})
	}
}

// BenchmarkPrompt8k writes one 8,192-token prompt two ways: the synthetic
// path's corpus window decoded and verified by re-encoding (the baseline),
// and 16 hash-id blocks of one-token words (exact by construction).
func BenchmarkPrompt8k(b *testing.B) {
	const isl = 8192
	tok := o200k(b)
	c, err := corpusFor(tok, "")
	require.NoError(b, err)
	w, err := blockWords(tok)
	require.NoError(b, err)
	b.Run("corpus-window", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			if _, err := exactPrompt(tok, c, isl, r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hash-blocks", func(b *testing.B) {
		hashIDs := make([]int64, isl/512)
		for i := range hashIDs {
			hashIDs[i] = int64(i)
		}
		row := uint64(0)
		for b.Loop() {
			row++
			hashIDs[len(hashIDs)-1] = int64(row) // a fresh last block each time
			_ = w.hashPrompt(1, hashIDs, isl, 512, row)
		}
	})
}
