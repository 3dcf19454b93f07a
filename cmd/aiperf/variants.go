package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/runner"
)

// variantCells are the cells of AIPerf's --variant flags over base: each
// "[name:] key=value, key=value, ..." is one cell, labelled by its name
// (variant_N without one), its keys profile flags without their dashes
// (kebab or snake case, aliases too: isl, request-rate, request_count).
// Each cell's seed is the base seed plus its position unless sameSeed.
func variantCells(sweep string, base plan.Profile, variants []string, sameSeed bool) ([]plan.Cell, error) {
	cells := make([]plan.Cell, len(variants))
	seen := map[string]int{}
	for k, v := range variants {
		name, params, err := parseVariant(v)
		if err != nil {
			return nil, fmt.Errorf("--variant %q: %w", v, err)
		}
		if name == "" {
			name = fmt.Sprintf("variant_%d", k+1)
		}
		label := plan.DirName(name)
		if j, dup := seen[label]; dup {
			return nil, fmt.Errorf("--variant %q: its name %q is the name of --variant %d too: name each differently", v, name, j+1)
		}
		seen[label] = k
		p := base
		for _, prm := range params {
			o, _ := plan.LookupOption(prm.Name)
			if err := o.Set(&p, prm.Value); err != nil {
				return nil, fmt.Errorf("--variant %q: %s: %w", v, prm.Name, err)
			}
		}
		if !sameSeed {
			p.RandomSeed = base.RandomSeed + int64(k)
		}
		id := append([]plan.Param{{Name: "variant", Value: name}}, params...)
		cells[k] = plan.Cell{ID: plan.CellID(sweep, id), Label: label, Index: k, Params: params, Profile: p}
	}
	return cells, nil
}

// parseVariant reads one --variant: its name (before a ':' that comes
// before the first '=') and its key=value pairs, each value of its
// option's kind.
func parseVariant(v string) (string, []plan.Param, error) {
	var name string
	if colon, eq := strings.Index(v, ":"), strings.Index(v, "="); colon >= 0 && (eq < 0 || colon < eq) {
		name, v = strings.TrimSpace(v[:colon]), v[colon+1:]
	}
	var params []plan.Param
	for pair := range strings.SplitSeq(v, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		key, raw, ok := strings.Cut(pair, "=")
		key, raw = strings.ReplaceAll(strings.TrimSpace(key), "-", "_"), strings.TrimSpace(raw)
		if !ok || key == "" {
			return "", nil, fmt.Errorf("%q is not key=value (e.g. concurrency=8)", strings.TrimSpace(pair))
		}
		o, known := plan.LookupOption(key)
		if !known {
			return "", nil, fmt.Errorf("%s is not a profile flag", key)
		}
		val, err := variantValue(o, raw)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", key, err)
		}
		params = append(params, plan.Param{Name: o.Name, Value: val})
	}
	if len(params) == 0 {
		return "", nil, fmt.Errorf("sets nothing: give key=value pairs, e.g. \"fast: concurrency=8, isl=128\"")
	}
	return name, params, nil
}

// variantValue is raw as option o takes it: a number, a bool or a string.
func variantValue(o plan.Option, raw string) (any, error) {
	switch t := o.TypeName(); {
	case strings.Contains(t, "int") || strings.Contains(t, "float"):
		return parseNumber(o, raw)
	case strings.Contains(t, "bool"):
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", raw)
		}
		return b, nil
	case t == "string":
		return raw, nil
	default:
		return nil, fmt.Errorf("takes a list, which a --variant cannot set")
	}
}

// variants runs the --variant cells as one sweep, in AIPerf's layout (a
// directory per variant, as a comma-list sweep's cells).
func (c *ProfileCmd) variants(ctx context.Context, g *Globals, spec runner.Spec, dir string) error {
	switch {
	case len(c.Variant) == 1:
		return usageErr(errors.New("one --variant is one run: give its flags themselves, or two --variant at least"))
	case len(g.sweepLists) > 0:
		return usageErr(fmt.Errorf("--variant cannot be combined with comma lists (%s): put those values in the variants", g.sweepLists[0].flag))
	case len(c.yamlCells) > 0:
		return usageErr(errors.New("--variant cannot be combined with a config file's sweep: put the variants in its sweep: section"))
	case c.SearchRecipe != "" || len(c.SearchSpace) > 0:
		return usageErr(errors.New("--variant cannot be combined with a search (--search-recipe, --search-space)"))
	}
	cells, err := variantCells(cmp.Or(c.Name, "profile"), spec.Profile, c.Variant, c.ParameterSweepSameSeed)
	if err != nil {
		return usageErr(err)
	}
	return c.runCells(ctx, g, spec, dir, cells)
}
