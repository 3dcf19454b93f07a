package starlark_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/starlark"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireDistinctDirs checks that every cell of s has its own directory,
// also on a case-insensitive file system, of at most 255 bytes.
func requireDistinctDirs(t *testing.T, s plan.Sweep) {
	t.Helper()
	seen := map[string]string{}
	for _, c := range s.Cells {
		dir := plan.Trial{Sweep: s.Name, Cell: c, Number: 1}.Dir()
		for _, part := range strings.Split(dir, "/") {
			require.LessOrEqual(t, len(part), plan.MaxNameBytes, dir)
		}
		require.Equal(t, c.Label, strings.Split(dir, "/")[1], "the label is the cell's directory")
		folded := strings.ToLower(dir)
		require.NotContains(t, seen, folded, "%s and %s share a directory", seen[folded], c.Label)
		seen[folded] = c.Label
	}
}

func TestLabelsAreFaithful(t *testing.T) {
	t.Parallel()
	const script = `
base = profile(model = "m", url = "http://127.0.0.1:8000")
sweep(name = "s", base = base, matrix = {%s: [%s]})
`
	tests := []struct {
		name, option, values string
		want                 []string // nil: distinct labels are enough
	}{
		{name: "exponents", option: `"request_rate"`, values: "1e9, 1e-7, 1.5e-7",
			want: []string{"request_rate_1e9", "request_rate_1e-7", "request_rate_1.5e-7"}},
		// Infinite values are refused by validation; their labels are
		// tested in internal/plan (TestCellLabelsAreFaithful).
		{name: "differ only after sanitising", option: `"model"`, values: `"org/m", "org-m", "org m", "plain"`},
		{name: "differ only in case", option: `"model"`, values: `"Llama", "llama"`},
		{name: "list and string", option: `"model"`, values: `"a+b", ["a", "b"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := loadScript(t, fmt.Sprintf(script, tt.option, tt.values), starlark.Options{})[0]
			requireDistinctDirs(t, s)
			if tt.want != nil {
				assert.Equal(t, tt.want, labels(s))
			}
		})
	}
	t.Run("only look-alikes get a hash", func(t *testing.T) {
		t.Parallel()
		s := loadScript(t, fmt.Sprintf(script, `"model"`, `"org/m", "org-m", "plain"`), starlark.Options{})[0]
		got := labels(s)
		assert.Regexp(t, `^model_org-m-[0-9a-f]{8}$`, got[0])
		assert.Regexp(t, `^model_org-m-[0-9a-f]{8}$`, got[1])
		assert.Equal(t, "model_plain", got[2])
	})
}

func TestLabelsDoNotDependOnSkip(t *testing.T) {
	t.Parallel()
	src := `
sweep(name = "s", base = profile(model = "m"), matrix = {"model": ["org/m", "org m"]}, skip = %s)
`
	all := loadScript(t, fmt.Sprintf(src, "None"), starlark.Options{})[0]
	kept := loadScript(t, fmt.Sprintf(src, `lambda cell: cell.model == ["org m"]`), starlark.Options{})[0]
	require.Len(t, kept.Cells, 1)
	assert.Regexp(t, `^model_org-m-[0-9a-f]{8}$`, kept.Cells[0].Label)
	assert.Equal(t, all.Cells[0].Label, kept.Cells[0].Label, "a cell's label is the one of the full expansion")
}

func TestLongNamesAreShortened(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	sweeps := loadScript(t, fmt.Sprintf(`
base = profile(model = "m")
sweep(name = "n%[1]s", base = base, matrix = {"model": ["%[1]sa", "%[1]sb"]})
sweep(name = "scenarios", base = base, scenarios = [{"name": "%[1]s1", "concurrency": 1}, {"name": "%[1]s2", "concurrency": 2}])
`, long), starlark.Options{})
	for _, s := range sweeps {
		requireDistinctDirs(t, s)
		for _, c := range s.Cells {
			assert.Len(t, c.Label, plan.MaxNameBytes)
		}
	}
	assert.Equal(t, "n"+long, sweeps[0].Name, "the sweep keeps its name; only its directory is shortened")
	assert.Len(t, strings.Split(sweeps[0].TrialList()[0].Dir(), "/")[0], plan.MaxNameBytes)
}

func TestScenarioNamesDifferingInCase(t *testing.T) {
	t.Parallel()
	_, err := loadFiles(t, map[string]string{"sweeps.star": `
sweep(name = "s", base = profile(model = "m"), scenarios = [{"name": "Short"}, {"name": "short", "concurrency": 2}])
`}, starlark.Options{})
	errs := scriptErrors(t, err)
	assert.Equal(t, "sweeps.star:2:6", errs[0].Pos)
	assert.Equal(t, `sweep "s": cells Short and short differ only in letter case: they would share a directory `+
		"on a case-insensitive file system; rename one", errs[0].Msg)
}
