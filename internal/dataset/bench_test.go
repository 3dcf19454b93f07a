package dataset

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkSynthetic measures prompt generation for AIPerf's default ISL
// (550) and a long prompt (4096), corpus tokenization excluded (it is cached).
func BenchmarkSynthetic(b *testing.B) {
	const entries = 8
	for name, tok := range tokenizers(b) {
		_, err := corpusFor(tok, "")
		require.NoError(b, err)
		for _, isl := range []int{550, 4096} {
			b.Run(fmt.Sprintf("%s/isl=%d", name, isl), func(b *testing.B) {
				for b.Loop() {
					_, err := Synthetic(context.Background(), tok, Options{ISLMean: isl, Entries: entries, Seed: 1})
					require.NoError(b, err)
				}
				b.ReportMetric(float64(entries*b.N)/b.Elapsed().Seconds(), "prompts/s")
			})
		}
	}
}
