package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCurrentFormat: seeded with AIPerf's documented examples, current and
// older (testdata/aiperf_docs), and shapes of every section: any bytes
// either load or are refused with errors that each carry the file and a
// line; notes name the file; and Migrate, when it rewrites a file that
// loads, gives one that loads to the same profiles and that it leaves
// alone. (FuzzConfig fuzzes the loaded profile's checks.)
func FuzzCurrentFormat(f *testing.F) {
	docs, _ := filepath.Glob(filepath.Join(docs, "*", "*.yaml"))
	for _, path := range docs {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	for _, seed := range []string{
		"variables: {a: 2, b: '{{ a * 3 }}'}\nbenchmark: {phases: {concurrency: '{{ b // 2 }}', requests: '{{ a ** 3 }}'}}",
		"models: [m]\nendpoint: {urls: [http://x]}\nphases: [{name: p, type: concurrency, requests: 1}]\nsweep: {variables: {phases.p.concurrency: [1, 2]}}",
		"benchmark: {warmup: {requests: 1}, profiling: {type: gamma, rate: 2, smoothness: 1.5, duration: 1m, rate_ramp: {duration: 5s}}}",
		"sweep: {type: scenarios, runs: [{name: a, phases: [{name: profiling, rate: 3}]}, {name: b, benchmark: {dataset: {prompts: {isl: 5}}}}]}",
		"benchmark: {datasets: {main: {type: synthetic, turns: 2, prefix_prompts: {pool_size: 2, length: 4}}}, slos: {time_to_first_token: 5}}",
		"benchmark: {artifacts: {records: false, slice_duration: 2h}, tokenizer: {name: x}, gpu_telemetry: {enabled: false}}",
		"sweep: {type: adaptive_search, search_space: [{path: concurrency, lo: 1, hi: 9, kind: int}], max_iterations: 4,\n" +
			"  sla_filters: [{metric: time_to_first_token, stat: p99, op: '<', threshold: 80}]}\nmulti_run: {num_runs: 2, convergence: {metric: x}}",
		"benchmark: {dataset: {type: file, format: single_turn, records: [{text: a}, {text: b, output_length: 3}]}}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.yaml", data)
		if err != nil {
			for _, e := range leaves(err) {
				var ce *Error
				if !errors.As(e, &ce) || ce.File != "fuzz.yaml" || ce.Line < 1 {
					t.Fatalf("error without a line: %v", e)
				}
			}
			return
		}
		for _, n := range file.Notes {
			if !strings.HasPrefix(n, "fuzz.yaml") {
				t.Fatalf("a note without the file: %s", n)
			}
		}
		out, _, changed, err := Migrate("fuzz.yaml", data)
		if err != nil || !changed {
			return
		}
		again, err := Parse("fuzz.yaml", out)
		if err != nil {
			t.Fatalf("the migrated file does not load: %v\n%s", err, out)
		}
		if again.Schema != Schema20 {
			t.Fatalf("the migrated file is in %s", again.Schema)
		}
		if _, _, twice, err := Migrate("fuzz.yaml", out); err != nil || twice {
			t.Fatalf("migrating again changed it (%v)", err)
		}
	})
}
