package starlark_test

import (
	"testing"

	"github.com/aiperf-go/aiperf/starlark"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanTooLarge: a plan over the trial limit fails at the sweep() call,
// naming the sizes and the override, before its cells are expanded (a
// 1000 × 1000 matrix used to take more than a minute to expand, and a
// product beyond 64 bits panicked).
func TestPlanTooLarge(t *testing.T) {
	t.Parallel()
	const base = "base = profile(model = \"m\")\n"
	const fix = "; sweep fewer values or trials, or raise the limit with --max-trials N"
	tests := []struct {
		name, src string
		maxTrials int
		pos, msg  string
	}{
		{
			name: "matrix",
			src: base + "sweep(name = \"big\", base = base, trials = 3,\n" +
				"      matrix = {\"concurrency\": list(range(1, 1001)), \"isl\": list(range(1, 1001))})\n",
			pos: "sweeps.star:2:6",
			msg: "sweep: the plan is too large: matrix concurrency (1000) × isl (1000) = 1000000 cells × 3 trials " +
				"= 3000000 trials, over the limit of 100000" + fix,
		},
		{
			name: "a range too long to check value by value",
			src:  base + "sweep(name = \"r\", base = base, matrix = {\"concurrency\": range(1, 1000000001)})\n",
			pos:  "sweeps.star:2:6",
			msg: "sweep: the plan is too large: matrix concurrency (1000000000) = 1000000000 cells × 1 trial = 1000000000 trials, " +
				"over the limit of 100000" + fix,
		},
		{
			name: "trials",
			src:  base + "sweep(name = \"long\", base = base, trials = 1000000000)\n",
			pos:  "sweeps.star:2:6",
			msg:  "sweep: the plan is too large: 1 cell × 1000000000 trials = 1000000000 trials, over the limit of 100000" + fix,
		},
		{
			name: "matrix product beyond 64 bits",
			src: base + "v = list(range(1, 1001))\n" +
				"sweep(name = \"huge\", base = base, matrix = {\"concurrency\": v, \"isl\": v, \"osl\": v, \"request_count\": v, " +
				"\"random_seed\": v, \"request_rate\": v, \"num_dataset_entries\": v})\n",
			pos: "sweeps.star:3:6",
			msg: "sweep: the plan is too large: matrix concurrency (1000) × isl (1000) × osl (1000) × " +
				"request_count (1000) × random_seed (1000) × request_rate (1000) × num_dataset_entries (1000) = " +
				"1000000000000000000000 cells × 1 trial = 1000000000000000000000 trials, over the limit of 100000" + fix,
		},
		{
			name: "across sweeps",
			src: base + "sweep(name = \"a\", base = base, scenarios = [{\"name\": \"x\"}], trials = 60000)\n" +
				"sweep(name = \"b\", base = base, zip = {\"concurrency\": [1, 2]}, trials = 20001)\n",
			pos: "sweeps.star:3:6",
			msg: "sweep: the plan is too large: this sweep's 40002 trials (zip of 2 cells × 20001 trials) bring the script's total " +
				"to 100002, over the limit of 100000" + fix,
		},
		{
			name:      "a lower limit",
			src:       base + "sweep(name = \"s\", base = base, scenarios = [{\"name\": \"x\"}, {\"name\": \"y\", \"concurrency\": 2}], trials = 3)\n",
			maxTrials: 5,
			pos:       "sweeps.star:2:6",
			msg:       "sweep: the plan is too large: 2 scenarios × 3 trials = 6 trials, over the limit of 5" + fix,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadFiles(t, map[string]string{"sweeps.star": tt.src}, starlark.Options{MaxTrials: tt.maxTrials})
			errs := scriptErrors(t, err)
			require.Len(t, errs, 1)
			assert.Equal(t, tt.pos, errs[0].Pos)
			assert.Equal(t, tt.msg, errs[0].Msg)
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		t.Parallel()
		s := loadScript(t, base+"sweep(name = \"s\", base = base, matrix = {\"concurrency\": [1, 2]}, trials = 3)\n",
			starlark.Options{MaxTrials: 6})
		assert.Len(t, s[0].TrialList(), 6)
	})
}
