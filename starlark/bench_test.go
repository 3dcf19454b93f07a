package starlark_test

import (
	"context"
	"testing"

	"github.com/aiperf-go/aiperf/starlark"
)

// benchScript declares 1,000 cells with computed values, a helper function
// and a skip that keeps them all.
const benchScript = `
base = profile(model = "mock-model", url = "http://127.0.0.1:8000", streaming = True,
               request_count = 100, reset_kv_cache = True)

def levels(start, n):
    return [start * (i + 1) for i in range(n)]

sweep(name = "big", base = base,
      matrix = {
          "concurrency": levels(4, 10),
          "synthetic_input_tokens_mean": levels(128, 10),
          "output_tokens_mean": levels(32, 10),
      },
      trials = 3,
      skip = lambda cell: cell.concurrency > 1000)
`

func BenchmarkLoad1000Cells(b *testing.B) { benchLoad(b, benchScript, 1000) }

// BenchmarkLoad10000Cells plans a 100 × 100 matrix: 10^4 cells, each
// labelled, seeded and validated.
func BenchmarkLoad10000Cells(b *testing.B) {
	benchLoad(b, `
base = profile(model = "mock-model", url = "http://127.0.0.1:8000", streaming = True, request_count = 100)
sweep(name = "big", base = base,
      matrix = {"concurrency": range(1, 101), "synthetic_input_tokens_mean": [128 * i for i in range(1, 101)]})
`, 10_000)
}

// benchLoad loads a one-sweep script of the given number of cells.
func benchLoad(b *testing.B, src string, cells int) {
	o := starlark.Options{ReadFile: memFS(map[string]string{"sweeps.star": src})}
	for b.Loop() {
		sweeps, err := starlark.Load(context.Background(), "sweeps.star", o)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(sweeps[0].Cells); n != cells {
			b.Fatalf("%d cells, want %d", n, cells)
		}
	}
}
