package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mlflow/mlflowfake"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
)

const mlflowSearch = `
base = profile(model = "mock-model", url = vars["url"], tokenizer = vars["tok"], streaming = True,
               request_count = 4, synthetic_input_tokens_mean = 16, output_tokens_mean = 2, num_dataset_entries = 4)

def two(history):
    return {"concurrency": len(history) + 1} if len(history) < 2 else None

search(name = "mls", base = base, space = {"concurrency": [1, 2]}, sla = ["time_to_first_token:p99:lt:100000"],
       objective = "output_token_throughput.avg", planner = two)
`

// TestSearchLogsToMLflowLikeASweep: the integration flags reach a search's
// probes as they reach a sweep's cells, from aiperf profile --search-* and
// from a script's search() under aiperf sweep: with --mlflow-tracking-uri
// the search is one parent run (named after it, with its parameters) and
// each probe's trial a child of it, in the FAKE MLflow server's records.
func TestSearchLogsToMLflowLikeASweep(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	tok := tinyTokenizer(t)
	for name, args := range map[string]func(dir, mlflowURL string) []string{
		"profile": func(_, mlflowURL string) []string {
			return quick(m.URL, "--tokenizer", tok, "--request-count", "4", "--search-recipe", "max-concurrency-under-sla",
				"--search-sla", "time_to_first_token:p99:lt:100000", "--concurrency-max", "2", "--artifact-dir", "mls",
				"--name", "mls", "--mlflow-tracking-uri", mlflowURL, "--mlflow-experiment", "perf")
		},
		"script": func(dir, mlflowURL string) []string {
			return []string{"sweep", writeFile(t, dir, "s.star", mlflowSearch), "--set", "url=" + m.URL, "--set", "tok=" + tok,
				"--ui", "none", "--artifact-dir", dir, "--mlflow-tracking-uri", mlflowURL, "--mlflow-experiment", "perf"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			fake := mlflowfake.Start(t)
			dir := t.TempDir()
			inv := cli(t, dir, args(dir, fake.URL)...)
			require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
			var doc search.HistoryDoc
			readJSONInto(t, filepath.Join(dir, "mls", runner.HistoryFile), &doc)
			require.Len(t, doc.Iterations, 2, "probes 1 and 2")

			runs := fake.Runs()
			require.Equal(t, 3, len(runs), "one parent and a child per probe")
			parent := runs[0]
			assert.Equal(t, "mls", parent.Name)
			assert.Equal(t, "FINISHED", parent.Status)
			assert.Equal(t, fake.Experiments()["perf"], parent.Experiment)
			assert.Equal(t, "mls", parent.Params["search.name"])
			assert.Contains(t, inv.stderr, `mlflow: search "mls" is parent run `+parent.ID)
			for _, child := range runs[1:] {
				assert.Equal(t, parent.ID, child.Parent)
				assert.Equal(t, "FINISHED", child.Status)
				assert.Equal(t, fake.Experiments()["perf"], child.Experiment)
				assert.Contains(t, child.Metrics, "request_throughput")
			}
		})
	}
}
