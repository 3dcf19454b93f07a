package starlark

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"go.starlark.net/starlark"
)

// notInProfile names the run-level flags of `aiperf profile` (and their
// AIPerf spellings) that people try to put in a profile, with where they
// belong instead.
var notInProfile = map[string]string{
	"artifact_dir":                     "it is set by the sweep runner; use aiperf sweep --artifact-dir",
	"output_artifact_dir":              "it is set by the sweep runner; use aiperf sweep --artifact-dir",
	"config":                           "it names a YAML file for aiperf profile; a script sets the options itself",
	"name":                             "sweep(name = ...) names the sweep and the parameters label each cell",
	"store":                            "the sweep runner records every trial; use aiperf sweep --store",
	"no_store":                         "the sweep runner records every trial; use aiperf sweep --store",
	"ui":                               "it is a run-level setting; use aiperf sweep --ui",
	"ui_type":                          "it is a run-level setting; use aiperf sweep --ui",
	"verbose":                          "it is a run-level setting; choose it on the aiperf command line",
	"log_level":                        "it is a run-level setting; choose it on the aiperf command line",
	"num_profile_runs":                 "trials belong to the sweep; use sweep(trials = N)",
	"profile_run_cooldown_seconds":     "cooldown belongs to the sweep; use sweep(cooldown_seconds = S)",
	"parameter_sweep_cooldown_seconds": "cooldown belongs to the sweep; use sweep(cooldown_seconds = S)",
	"parameter_sweep_same_seed":        "seeding belongs to the sweep; use sweep(same_seed = True)",
	"confidence_level":                 "it is a run-level setting; use aiperf sweep --confidence-level",
	"spec_file":                        "it is internal to the sweep runner",
	"result_file":                      "it is internal to the sweep runner",
	"phases":                           "phase lists are YAML-only; use warmup_request_count or warmup_duration",
}

// lookupOption finds a profile option by its snake_case name or alias, or
// explains why there is none.
func lookupOption(name string) (plan.Option, error) {
	if o, ok := plan.LookupOption(name); ok {
		return o, nil
	}
	if hint, ok := notInProfile[name]; ok {
		return plan.Option{}, fmt.Errorf("%s is not a profile option: %s", name, hint)
	}
	return plan.Option{}, fmt.Errorf("unknown option %q%s", name, suggest(name))
}

// setOption assigns a Starlark value to the named option of p.
func setOption(p *plan.Profile, name string, v starlark.Value) (plan.Option, error) {
	o, err := lookupOption(name)
	if err != nil {
		return o, err
	}
	g, ok := toGo(v)
	if !ok {
		return o, fmt.Errorf("%s: want %s, got %s", name, o.TypeName(), v.Type())
	}
	if holdsRedacted(g) {
		return o, fmt.Errorf("%s: %s is what a profile's secret reads back as (p.api_key, a secret header, URL credentials), not "+
			"the secret: give the secret itself (vars.get(...)), or derive the profile with p.replace(...), which keeps it", name, plan.Redacted)
	}
	if err := o.Set(p, g); err != nil {
		return o, fmt.Errorf("%s: %w", name, err)
	}
	return o, nil
}

// holdsRedacted tells whether a value (as toGo returns it) holds the
// marker a secret reads back as (profileValue.Attr).
func holdsRedacted(g any) bool {
	switch x := g.(type) {
	case string:
		return strings.Contains(x, plan.Redacted)
	case []any:
		return slices.ContainsFunc(x, holdsRedacted)
	}
	return false
}

// suggest lists the option names closest to a misspelt one (see plan.Suggest).
func suggest(name string) string {
	names := make([]string, 0, len(plan.Options()))
	for _, o := range plan.Options() {
		names = append(names, o.Name)
	}
	return plan.Suggest(name, names)
}

// toGo converts a Starlark option value to the loose Go form Option.Set
// takes: int, float64, string, bool, []any or nil. ok is false for any other
// type (dicts, functions, profiles, ...).
func toGo(v starlark.Value) (any, bool) {
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, true
	case starlark.Bool:
		return bool(x), true
	case starlark.Int:
		n, ok := x.Int64()
		return int(n), ok
	case starlark.Float:
		return float64(x), true
	case starlark.String:
		return string(x), true
	case *starlark.List, starlark.Tuple:
		var out []any
		iter := starlark.Iterate(x)
		defer iter.Done()
		var e starlark.Value
		for iter.Next(&e) {
			g, ok := toGo(e)
			if !ok {
				return nil, false
			}
			out = append(out, g)
		}
		return out, true
	}
	return nil, false
}

// toStarlark converts an option value (as Option.Get returns it) back to
// Starlark; lists come back frozen.
func toStarlark(v any) starlark.Value {
	switch x := v.(type) {
	case nil:
		return starlark.None
	case bool:
		return starlark.Bool(x)
	case int:
		return starlark.MakeInt(x)
	case int64:
		return starlark.MakeInt64(x)
	case float64:
		return starlark.Float(x)
	case string:
		return starlark.String(x)
	case []string:
		elems := make([]starlark.Value, len(x))
		for i, s := range x {
			elems[i] = starlark.String(s)
		}
		l := starlark.NewList(elems)
		l.Freeze()
		return l
	}
	return starlark.String(fmt.Sprint(v))
}
