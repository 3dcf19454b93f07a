package media

import (
	"context"
	"testing"
)

// BenchmarkImages1024 makes 1024×1024 noise images as a run does: one per
// op, in parallel. held-B/image is what a run keeps of each (its data
// URI); B/op counts the transient pixels and encoder buffers too.
func BenchmarkImages1024(b *testing.B) {
	for _, format := range []string{FormatPNG, FormatJPEG} {
		b.Run(format, func(b *testing.B) {
			o := ImageOptions{WidthMean: 1024, HeightMean: 1024, Batch: 1, Format: format}
			b.ReportAllocs()
			items, err := Images(context.Background(), o, 1, b.N)
			if err != nil {
				b.Fatal(err)
			}
			held := 0
			for _, it := range items {
				held += len(it.URL)
			}
			b.ReportMetric(float64(held)/float64(b.N), "held-B/image")
		})
	}
}
