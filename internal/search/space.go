package search

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kind is how a parameter's values are spelled: whole numbers or reals.
type Kind string

// Kinds (AIPerf's SearchSpaceDimension.kind).
const (
	KindInt  Kind = "int"
	KindReal Kind = "real"
)

// Param is one dimension of a search space. Name is the profile option a
// probe sets (concurrency, synthetic_input_tokens_mean, ...); Path is the
// name search_history.json gives it, AIPerf's dotted path into its
// BenchmarkConfig (phases.profiling.concurrency) — Name when empty. Lo and
// Hi are inclusive; Log puts the planners on a log scale (AIPerf's
// log-uniform prior), which needs Lo > 0.
type Param struct {
	Name string
	Path string
	Lo   float64
	Hi   float64
	Kind Kind
	Log  bool
}

// Key is the name search_history.json gives the parameter.
func (p Param) Key() string {
	if p.Path != "" {
		return p.Path
	}
	return p.Name
}

// Space is the ordered list of searched parameters.
type Space []Param

// Point is one position in a Space: a value per parameter, in its order.
type Point []float64

// Equal tells whether two points have the same values.
func (p Point) Equal(q Point) bool { return slices.Equal(p, q) }

// Aliases of the bare names AIPerf's --search-space accepts, resolved to
// the profile option a probe sets and AIPerf's dotted path.
var paramAliases = map[string][2]string{
	"concurrency":                  {"concurrency", "phases.profiling.concurrency"},
	"phases.profiling.concurrency": {"concurrency", "phases.profiling.concurrency"},
	"rate":                         {"request_rate", "phases.profiling.rate"},
	"request_rate":                 {"request_rate", "phases.profiling.rate"},
	"phases.profiling.rate":        {"request_rate", "phases.profiling.rate"},
	"isl":                          {"synthetic_input_tokens_mean", "datasets.main.prompts.isl"},
	"datasets.main.prompts.isl":    {"synthetic_input_tokens_mean", "datasets.main.prompts.isl"},
	"osl":                          {"output_tokens_mean", "datasets.main.prompts.osl"},
	"datasets.main.prompts.osl":    {"output_tokens_mean", "datasets.main.prompts.osl"},
}

// ParseParam reads AIPerf's --search-space syntax PATH:LO,HI[:KIND] (KIND
// int or real, default real; float is accepted for real), plus our
// extension :log after the kind for a log scale, e.g. "concurrency:1,1000:int:log".
// The bare AIPerf names (concurrency, rate, isl, osl) and their dotted paths
// resolve to the profile options they set; any other path is kept as both
// name and path, for the caller to resolve.
func ParseParam(spec string) (Param, error) {
	parts := strings.Split(strings.TrimSpace(spec), ":")
	if len(parts) < 2 || len(parts) > 4 || parts[0] == "" {
		return Param{}, fmt.Errorf("--search-space %q: want PATH:LO,HI[:int|real[:log]], e.g. concurrency:1,1000:int", spec)
	}
	p := Param{Name: parts[0], Kind: KindReal}
	if a, ok := paramAliases[parts[0]]; ok {
		p.Name, p.Path = a[0], a[1]
	}
	lo, hi, ok := strings.Cut(parts[1], ",")
	var err1, err2 error
	p.Lo, err1 = strconv.ParseFloat(strings.TrimSpace(lo), 64)
	p.Hi, err2 = strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if !ok || err1 != nil || err2 != nil {
		return Param{}, fmt.Errorf("--search-space %q: bounds %q are not LO,HI numbers", spec, parts[1])
	}
	if len(parts) >= 3 {
		switch parts[2] {
		case "int":
			p.Kind = KindInt
		case "real", "float":
		default:
			return Param{}, fmt.Errorf("--search-space %q: kind %q is not int or real", spec, parts[2])
		}
	}
	if len(parts) == 4 {
		if parts[3] != "log" {
			return Param{}, fmt.Errorf("--search-space %q: %q is not log (the only scale option)", spec, parts[3])
		}
		p.Log = true
	}
	if err := p.check(); err != nil {
		return Param{}, fmt.Errorf("--search-space %q: %w", spec, err)
	}
	return p, nil
}

// check tells what is wrong with one parameter's bounds.
func (p Param) check() error {
	switch {
	case p.Name == "":
		return fmt.Errorf("a parameter has no name")
	case p.Kind != KindInt && p.Kind != KindReal:
		return fmt.Errorf("%s: kind %q is not int or real", p.Key(), p.Kind)
	case math.IsNaN(p.Lo) || math.IsNaN(p.Hi) || math.IsInf(p.Lo, 0) || math.IsInf(p.Hi, 0):
		return fmt.Errorf("%s: bounds must be finite numbers", p.Key())
	case p.Hi <= p.Lo:
		return fmt.Errorf("%s: the space is empty or inverted (lo %g, hi %g): hi must be above lo", p.Key(), p.Lo, p.Hi)
	case p.Kind == KindInt && (p.Lo != math.Trunc(p.Lo) || p.Hi != math.Trunc(p.Hi)):
		return fmt.Errorf("%s: an int parameter needs whole bounds (lo %g, hi %g)", p.Key(), p.Lo, p.Hi)
	case p.Log && p.Lo <= 0:
		return fmt.Errorf("%s: a log scale needs lo > 0 (got %g)", p.Key(), p.Lo)
	}
	return nil
}

// Validate checks every parameter and that no two share a name.
func (s Space) Validate() error {
	if len(s) == 0 {
		return fmt.Errorf("the search space is empty: give at least one --search-space PATH:LO,HI")
	}
	seen := map[string]bool{}
	for _, p := range s {
		if err := p.check(); err != nil {
			return err
		}
		if seen[p.Name] {
			return fmt.Errorf("%s is searched twice", p.Key())
		}
		seen[p.Name] = true
	}
	return nil
}

// Check tells whether pt is a point of the space: one finite value per
// parameter, within bounds, whole for int parameters.
func (s Space) Check(pt Point) error {
	if len(pt) != len(s) {
		return fmt.Errorf("point %v has %d values for %d parameters", []float64(pt), len(pt), len(s))
	}
	for i, p := range s {
		v := pt[i]
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return fmt.Errorf("%s = %g is not a finite number", p.Key(), v)
		case v < p.Lo || v > p.Hi:
			return fmt.Errorf("%s = %g is outside the space [%g, %g]", p.Key(), v, p.Lo, p.Hi)
		case p.Kind == KindInt && v != math.Trunc(v):
			return fmt.Errorf("%s = %g is not a whole number", p.Key(), v)
		}
	}
	return nil
}

// Snap rounds int parameters to the nearest whole number and clamps every
// value into bounds.
func (s Space) Snap(pt Point) Point {
	out := make(Point, len(s))
	for i, p := range s {
		v := min(max(pt[i], p.Lo), p.Hi)
		if p.Kind == KindInt {
			v = math.Round(v)
		}
		out[i] = v
	}
	return out
}

// Values is the point as the profile options a probe sets: an int for int
// parameters, a float64 for real ones, keyed by Name.
func (s Space) Values(pt Point) map[string]any {
	out := make(map[string]any, len(s))
	for i, p := range s {
		out[p.Name] = p.value(pt[i])
	}
	return out
}

// keyed is the point keyed by Key, as search_history.json's variation_values.
func (s Space) keyed(pt Point) map[string]any {
	out := make(map[string]any, len(s))
	for i, p := range s {
		out[p.Key()] = p.value(pt[i])
	}
	return out
}

func (p Param) value(v float64) any {
	if p.Kind == KindInt {
		return int64(v)
	}
	return v
}

// toUnit maps a value into [0, 1], on a log scale when Log.
func (p Param) toUnit(v float64) float64 {
	if p.Log {
		return (math.Log(v) - math.Log(p.Lo)) / (math.Log(p.Hi) - math.Log(p.Lo))
	}
	return (v - p.Lo) / (p.Hi - p.Lo)
}

// fromUnit is the inverse of toUnit.
func (p Param) fromUnit(u float64) float64 {
	u = min(max(u, 0), 1)
	if p.Log {
		return math.Exp(math.Log(p.Lo) + u*(math.Log(p.Hi)-math.Log(p.Lo)))
	}
	return p.Lo + u*(p.Hi-p.Lo)
}

// LogSteps is AIPerf's log-spaced grid: n values from lo to hi (both
// included) spaced evenly in log, rounded to whole numbers and deduplicated,
// ascending. It needs 0 < lo < hi and n ≥ 2.
func LogSteps(lo, hi float64, n int) ([]float64, error) {
	switch {
	case n < 2:
		return nil, fmt.Errorf("a log-spaced grid needs at least 2 steps (got %d)", n)
	case lo <= 0:
		return nil, fmt.Errorf("a log-spaced grid needs a lower bound > 0 (got %g)", lo)
	case hi <= lo:
		return nil, fmt.Errorf("a log-spaced grid needs hi (%g) above lo (%g)", hi, lo)
	}
	var out []float64
	for i := range n {
		v := math.Max(1, math.Round(math.Exp(math.Log(lo)+(math.Log(hi)-math.Log(lo))*float64(i)/float64(n-1))))
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out, nil
}
