package search

import (
	"encoding/json"
	"math"
)

// Ends splits a bracket's failures: above is the lowest failure above the
// highest pass (the bracket's upper end), below the lowest failure at or
// below it when the SLA is not monotonic in the load (nil otherwise).
// Ours name them (infeasible_above, infeasible_min); in AIPerf's own
// histories, which have no infeasible_above, infeasible_min is placed by
// comparing it with feasible_max.
func (b *BoundaryDoc) Ends() (above, below *InfeasibleDoc) {
	if b.InfeasibleAbove != nil {
		return b.InfeasibleAbove, b.InfeasibleMin
	}
	low := b.InfeasibleMin
	if low == nil || b.FeasibleMax == nil {
		return low, nil
	}
	x, ok1 := Number(low.Value)
	pass, ok2 := Number(b.FeasibleMax.Value)
	if ok1 && ok2 && x <= pass {
		return nil, low
	}
	return low, nil
}

// Number is a variation value as a float64: values read back from a
// search_history.json are float64 or json.Number, ours in memory int64 or
// float64. ok is false for anything else and for NaN or ±Inf.
func Number(v any) (x float64, ok bool) {
	switch n := v.(type) {
	case float64:
		x = n
	case int64:
		x = float64(n)
	case int:
		x = float64(n)
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		x = f
	default:
		return 0, false
	}
	return x, !math.IsNaN(x) && !math.IsInf(x, 0)
}
