package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
)

// PluginsCmd is `aiperf plugins [category] [type]`, AIPerf's view of its
// plugin registry. Here every kind is compiled in: the categories are
// AIPerf's names for the kinds this client has, each chosen by a flag of
// aiperf profile, and the types are that flag's values, read from the
// command tree where the flag declares them.
type PluginsCmd struct {
	Category string `arg:"" optional:"" help:"A category to list (endpoint, arrival_pattern, custom_dataset_loader, search_planner, ...)."`
	Type     string `arg:"" optional:"" name:"type" help:"A type of the category to describe."`
	All      bool   `name:"all" short:"a" help:"List every category and its types (AIPerf's --all; also the default here)."`
	Check    bool   `name:"validate" short:"v" help:"AIPerf's plugins.yaml check: the plugins here are compiled in, so there is nothing to validate."`
}

// pluginCategory is one of AIPerf's plugin categories that aiperf has.
type pluginCategory struct {
	name, flag, help string
	types            func(app *kong.Application) []string
}

// pluginCategories are AIPerf's categories (its plugins.yaml names) that
// this client has, each with the profile flag that chooses its type.
var pluginCategories = []pluginCategory{
	{"endpoint", "--endpoint-type", "API shapes: how a request is formatted and its reply parsed",
		func(*kong.Application) []string { return plan.EndpointTypes }},
	{"transport", "--transport", "The network layer requests go over", flagEnum("transport")},
	{"timing_strategy", "", "How sends are scheduled, each chosen by its flag",
		func(*kong.Application) []string {
			return []string{"concurrency", "request_rate", "user_centric_rate", "fixed_schedule"}
		}},
	{"arrival_pattern", "--arrival-pattern", "Inter-arrival gaps of --request-rate", flagEnum("request-rate-mode")},
	{"custom_dataset_loader", "--custom-dataset-type", "Formats of --input-file",
		func(*kong.Application) []string { return plan.CustomDatasetTypes }},
	{"public_dataset_loader", "--public-dataset", "Public datasets (read from the local copy given with --input-file)", flagEnum("public-dataset")},
	{"dataset_sampler", "--dataset-sampling-strategy", "Orders the dataset's entries are handed out in", flagEnum("dataset-sampling-strategy")},
	{"url_selection_strategy", "--url-strategy", "How requests are spread over several --url", flagEnum("url-strategy")},
	{"ui", "--ui", "Progress displays", flagEnum("ui")},
	{"search_recipe", "--search-recipe", "Named searches", func(*kong.Application) []string { return search.Recipes() }},
	{"search_planner", "--search-planner", "Planners of --search-space", func(*kong.Application) []string {
		return []string{search.PlannerBayesian, search.PlannerMonotonic, search.PlannerSmoothIsotonic}
	}},
	{"convergence_criterion", "--convergence-mode", "When a cell's trials have converged (--convergence-metric)", func(*kong.Application) []string {
		return []string{search.ModeCIWidth, search.ModeCV, search.ModeDistribution}
	}},
}

// timingFlags are the flags that choose each timing strategy.
var timingFlags = map[string]string{"concurrency": "--concurrency", "request_rate": "--request-rate",
	"user_centric_rate": "--user-centric-rate", "fixed_schedule": "--fixed-schedule"}

// flagEnum reads the values of a profile flag's enum ("" left out).
func flagEnum(name string) func(*kong.Application) []string {
	return func(app *kong.Application) []string {
		for _, f := range profileFlags(app) {
			if f.Name == name {
				return slices.DeleteFunc(f.EnumSlice(), func(s string) bool { return strings.TrimSpace(s) == "" })
			}
		}
		return nil
	}
}

// profileFlags are the flags of aiperf profile.
func profileFlags(app *kong.Application) []*kong.Flag {
	for _, c := range app.Children {
		if c.Name == "profile" {
			return c.Flags
		}
	}
	return nil
}

// Run lists the categories, a category's types, or describes a type.
func (c *PluginsCmd) Run(g *Globals, k *kong.Context) error {
	if c.Check {
		fmt.Fprintln(g.Stdout, "nothing to validate: aiperf's plugins are compiled in (AIPerf's plugins.yaml has no counterpart)")
		return nil
	}
	if c.Category == "" {
		listCategories(g.Stdout, k.Model)
		return nil
	}
	i := slices.IndexFunc(pluginCategories, func(p pluginCategory) bool { return p.name == c.Category })
	if i < 0 {
		names := make([]string, len(pluginCategories))
		for j, p := range pluginCategories {
			names[j] = p.name
		}
		return usageErr(fmt.Errorf("unknown plugin category %q%s: want one of %s (aiperf plugins lists them)",
			c.Category, plan.Suggest(c.Category, names), strings.Join(names, ", ")))
	}
	cat := pluginCategories[i]
	types := cat.types(k.Model)
	if c.Type == "" {
		for _, t := range types {
			fmt.Fprintf(g.Stdout, "%-34s %s\n", t, typeSummary(cat, t))
		}
		return nil
	}
	if !slices.Contains(types, c.Type) {
		return usageErr(fmt.Errorf("%s has no type %q%s: want one of %s", cat.name, c.Type, plan.Suggest(c.Type, types),
			strings.Join(types, ", ")))
	}
	describeType(g.Stdout, cat, c.Type)
	return nil
}

// listCategories prints a line per category: its flag and types.
func listCategories(w io.Writer, app *kong.Application) {
	fmt.Fprintln(w, "aiperf's plugin categories (AIPerf's names; every type is built in):")
	for _, p := range pluginCategories {
		types := p.types(app)
		line := fmt.Sprintf("  %-23s %-28s %2d:", p.name, firstOf(p.flag, "(a flag each)"), len(types))
		for i, t := range types {
			if reserve := map[bool]int{true: 2, false: 4}[i == len(types)-1]; len(line)+len(t)+reserve > 120 {
				// the console's width: the rest with aiperf plugins CATEGORY
				line += " …"
				break
			}
			line += map[bool]string{true: " ", false: ", "}[i == 0] + t
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "aiperf plugins CATEGORY lists a category's types; aiperf plugins CATEGORY TYPE describes one.")
}

// selectedBy is the command-line fragment that chooses type t.
func selectedBy(cat pluginCategory, t string) string {
	if cat.flag == "" {
		return timingFlags[t]
	}
	return cat.flag + " " + t
}

// typeSummary is a type's one line: what selects it, and for an endpoint
// its path and traits.
func typeSummary(cat pluginCategory, t string) string {
	if cat.name != "endpoint" {
		return selectedBy(cat, t)
	}
	return selectedBy(cat, t) + ": " + strings.Join(endpointTraits(t), ", ")
}

// endpointTraits are what AIPerf's registry says of an endpoint type.
func endpointTraits(t string) []string {
	s := plan.SpecOf(t)
	out := []string{"path " + firstOf(s.Path, "none (the --url as given)")}
	if s.StreamPath != "" {
		out = append(out, "streaming path "+s.StreamPath)
	}
	for _, f := range []struct {
		on   bool
		what string
	}{{s.Streams, "streams"}, {s.Tokens, "generates tokens"}, {s.Messages, "sends a conversation"},
		{s.Batch, "batches texts"}, {s.Rankings, "query and passages"}, {s.Form, "multipart/form-data"}} {
		if f.on {
			out = append(out, f.what)
		}
	}
	return out
}

// describeType prints a type's details.
func describeType(w io.Writer, cat pluginCategory, t string) {
	fmt.Fprintf(w, "Type: %s\nCategory: %s (%s)\nSelected with: aiperf profile %s\nPackage: aiperf (built in)\n",
		t, cat.name, cat.help, selectedBy(cat, t))
	if cat.name == "endpoint" {
		for _, tr := range endpointTraits(t) {
			fmt.Fprintf(w, "  %s\n", tr)
		}
	}
}
