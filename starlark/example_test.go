package starlark_test

import (
	"context"
	"fmt"

	"github.com/aiperf-go/aiperf/starlark"
)

func ExampleLoad() {
	script := `
base = profile(model = "mock-model", url = vars.get("url", "http://127.0.0.1:8000"),
               streaming = True, request_count = 100)
sweep(name = "concurrency-scan", base = base,
      matrix = {"concurrency": [1, 4], "synthetic_input_tokens_mean": [128, 512]},
      trials = 3)
`
	sweeps, err := starlark.Load(context.Background(), "sweeps.star", starlark.Options{
		Vars:     map[string]string{"url": "http://10.0.0.1:9000"},
		ReadFile: func(string) ([]byte, error) { return []byte(script), nil },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range sweeps {
		fmt.Printf("%s (%s): %d cells × %d trials\n", s.Name, s.Source, len(s.Cells), s.Trials)
		for _, c := range s.Cells {
			fmt.Println(" ", c.Index, c.Label, c.Profile.URL[0])
		}
	}
	// Output:
	// concurrency-scan (sweeps.star:4): 4 cells × 3 trials
	//   0 concurrency_1__synthetic_input_tokens_mean_128 http://10.0.0.1:9000
	//   1 concurrency_1__synthetic_input_tokens_mean_512 http://10.0.0.1:9000
	//   2 concurrency_4__synthetic_input_tokens_mean_128 http://10.0.0.1:9000
	//   3 concurrency_4__synthetic_input_tokens_mean_512 http://10.0.0.1:9000
}

func ExampleError() {
	script := "base = profile(model = \"m\", concurency = 8)\n"
	_, err := starlark.Load(context.Background(), "sweeps.star", starlark.Options{
		ReadFile: func(string) ([]byte, error) { return []byte(script), nil },
	})
	fmt.Println(err)
	// Output:
	// sweeps.star:1:15: profile: unknown option "concurency" (did you mean "concurrency"?)
}
