package starlark

import (
	"fmt"
	"slices"

	"go.starlark.net/starlark"

	"github.com/aiperf-go/aiperf/internal/search"
)

// convergenceKeys are the keys of sweep()'s convergence dict, as a config
// file's multi_run.convergence.
var convergenceKeys = []string{"metric", "stat", "mode", "threshold"}

// parseConvergence reads sweep()'s convergence = {"metric": ..., "stat":
// ..., "mode": ..., "threshold": ...} (None: nil) and checks it as the
// --convergence-* flags are checked for the sweep's trials (and each cell,
// once expanded: plan.Sweep.CheckConvergence).
func parseConvergence(v *starlark.Dict, d *declaration) (*search.Convergence, error) {
	if v == nil {
		return nil, nil
	}
	c := &search.Convergence{}
	for _, kv := range v.Items() {
		key, ok := starlark.AsString(kv[0])
		if !ok || !slices.Contains(convergenceKeys, key) {
			return nil, fmt.Errorf("convergence: unknown key %s (want %v)", kv[0], convergenceKeys)
		}
		if key == "threshold" {
			x, ok := starlark.AsFloat(kv[1])
			if !ok {
				return nil, fmt.Errorf("convergence: threshold: want float, got %s", kv[1].Type())
			}
			if x == 0 {
				return nil, fmt.Errorf("convergence: threshold 0 must be between 0 and 1 (exclusive)")
			}
			c.Threshold = x
			continue
		}
		s, ok := starlark.AsString(kv[1])
		if !ok {
			return nil, fmt.Errorf("convergence: %s: want string, got %s", key, kv[1].Type())
		}
		switch key {
		case "metric":
			c.Metric = s
		case "stat":
			c.Stat = s
		default:
			c.Mode = s
		}
	}
	if err := c.CheckMultiRun(d.trials); err != nil {
		return nil, fmt.Errorf("convergence: %w", err)
	}
	return c, nil
}
