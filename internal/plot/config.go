package plot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/compare"
)

// Config is AIPerf's plot config (`aiperf plot --config FILE`, the file
// AIPerf keeps as ~/.aiperf/plot_config.yaml): which of AIPerf's figures
// to draw (visualization.single_run_defaults and multi_run_defaults) and
// its multi-run presets (visualization.multi_run_plots: type pareto or
// scatter_line, x and y as <metric>_<stat> or concurrency, groups and
// labels of one column, title). Our own figures are drawn whatever it
// says. Single-run presets are AIPerf's built-in ones (a body is not
// read); what it has that we do not draw is named in Notes.
type Config struct {
	SingleRun []string
	MultiRun  []string
	Notes     []string
	presets   []comparison // the multi-run ones, built-in and the file's
}

// maxConfigBytes bounds a plot config file.
const maxConfigBytes = 4 << 20

// DefaultConfig is AIPerf's default plot config: every figure.
func DefaultConfig() *Config {
	c := &Config{presets: slices.Clone(comparisons)}
	for _, p := range comparisons {
		c.MultiRun = append(c.MultiRun, p.name)
	}
	c.SingleRun = slices.Clone(singleRunNames)
	return c
}

// singleRunNames are AIPerf's single-run figures, in its default order.
var singleRunNames = []string{"ttft_over_time", "itl_over_time", "latency_over_time", "dispersed_throughput_over_time",
	"timeslices_ttft", "timeslices_itl", "timeslices_throughput", "timeslices_latency",
	"gpu_utilization_and_throughput_over_time", "ttft_timeline"}

// configError is a problem at a line of the file.
type configError struct {
	file string
	line int
	path string
	msg  string
}

func (e *configError) Error() string {
	return fmt.Sprintf("plot config %s:%d: %s: %s", e.file, e.line, e.path, e.msg)
}

// ReadConfig reads AIPerf's plot config YAML at path.
func ReadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read plot config: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read plot config %s: %w", path, err)
	}
	if len(b) > maxConfigBytes {
		return nil, fmt.Errorf("read plot config %s: larger than %d bytes", path, maxConfigBytes)
	}
	return parseConfig(path, b)
}

// rawConfig is the part of the file read, with its nodes for line numbers.
type rawConfig struct {
	Visualization *struct {
		MultiRunDefaults  yaml.Node            `yaml:"multi_run_defaults"`
		SingleRunDefaults yaml.Node            `yaml:"single_run_defaults"`
		MultiRunPlots     map[string]yaml.Node `yaml:"multi_run_plots"`
		SinglePlots       map[string]yaml.Node `yaml:"single_run_plots"`
	} `yaml:"visualization"`
	ExperimentClassification *yaml.Node `yaml:"experiment_classification"`
}

// preset is a multi_run_plots entry.
type preset struct {
	Type   string   `yaml:"type"`
	X      string   `yaml:"x"`
	Y      string   `yaml:"y"`
	Labels []string `yaml:"labels"`
	Groups []string `yaml:"groups"`
	Title  string   `yaml:"title"`
}

func parseConfig(file string, b []byte) (*Config, error) {
	var raw rawConfig
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("plot config %s: %w", file, err)
	}
	if raw.Visualization == nil {
		return nil, fmt.Errorf("plot config %s: no visualization: section (AIPerf's plot config has visualization.multi_run_defaults, single_run_defaults, …)", file)
	}
	v := raw.Visualization
	c := DefaultConfig()
	var errs []error
	for name, node := range v.MultiRunPlots {
		base := comparison{name: name, groups: "model", labels: "concurrency"}
		if i := slices.IndexFunc(comparisons, func(q comparison) bool { return q.name == name }); i >= 0 {
			base = comparisons[i] // the file's keys override AIPerf's built-in preset
		}
		p, err := presetOf(file, base, &node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if i := slices.IndexFunc(c.presets, func(q comparison) bool { return q.name == name }); i >= 0 {
			c.presets[i] = p
		} else {
			c.presets = append(c.presets, p)
		}
	}
	for name := range v.SinglePlots {
		if !slices.Contains(singleRunNames, name) {
			c.Notes = append(c.Notes, fmt.Sprintf("plot config: single_run_plots.%s is not drawn: the single-run figures are AIPerf's built-in ones (%s)",
				name, strings.Join(singleRunNames, ", ")))
		}
	}
	if raw.ExperimentClassification != nil {
		c.Notes = append(c.Notes, "plot config: experiment_classification is not applied: a comparison's series are its models")
	}
	lists := []struct {
		node *yaml.Node
		key  string
		into *[]string
		ok   func(string) bool
	}{
		{&v.MultiRunDefaults, "multi_run_defaults", &c.MultiRun,
			func(n string) bool {
				return slices.ContainsFunc(c.presets, func(q comparison) bool { return q.name == n })
			}},
		{&v.SingleRunDefaults, "single_run_defaults", &c.SingleRun,
			func(n string) bool { _, ok := v.SinglePlots[n]; return ok || slices.Contains(singleRunNames, n) }},
	}
	for _, l := range lists {
		if l.node.Kind == 0 {
			continue // not given: every figure
		}
		var names []string
		if err := l.node.Decode(&names); err != nil {
			errs = append(errs, &configError{file, l.node.Line, "visualization." + l.key, "want a list of plot names"})
			continue
		}
		for i, n := range names {
			if !l.ok(n) {
				errs = append(errs, &configError{file, l.node.Content[i].Line, "visualization." + l.key,
					fmt.Sprintf("%q is not a plot: name one of %s's presets", n, strings.TrimSuffix(l.key, "_defaults")+"_plots")})
			}
		}
		*l.into = names
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// presetOf reads a multi_run_plots entry over base (a built-in preset, or
// an empty one): the keys it gives replace base's.
func presetOf(file string, base comparison, node *yaml.Node) (comparison, error) {
	c := base
	fail := func(key, msg string) error {
		return &configError{file, node.Line, "visualization.multi_run_plots." + c.name + key, msg}
	}
	var p preset
	if err := node.Decode(&p); err != nil {
		return c, fail("", err.Error())
	}
	switch p.Type {
	case "pareto", "scatter_line":
		c.pareto = p.Type == "pareto"
	case "":
		if c.x.Metric == "" {
			return c, fail(".type", "missing: pareto or scatter_line")
		}
	default:
		return c, fail(".type", fmt.Sprintf("%q: the multi-run plot types are pareto and scatter_line", p.Type))
	}
	for _, ax := range []struct {
		key, value string
		into       *compare.Key
	}{{".x", p.X, &c.x}, {".y", p.Y, &c.y}} {
		if ax.value == "" && ax.into.Metric != "" {
			continue
		}
		k, err := axisKey(ax.value)
		if err != nil {
			return c, fail(ax.key, err.Error())
		}
		*ax.into = k
	}
	for _, col := range []struct {
		key  string
		vals []string
		into *string
	}{{".groups", p.Groups, &c.groups}, {".labels", p.Labels, &c.labels}} {
		switch {
		case len(col.vals) > 1:
			return c, fail(col.key, "one column only, as AIPerf")
		case len(col.vals) == 1 && !slices.Contains(columns, col.vals[0]):
			return c, fail(col.key, fmt.Sprintf("%q: want one of %s", col.vals[0], strings.Join(columns, ", ")))
		case len(col.vals) == 1:
			*col.into = col.vals[0]
		}
	}
	if p.Title != "" {
		c.title = p.Title
	}
	if c.title == "" {
		c.title = axisLabel(c.y, "") + " vs " + axisLabel(c.x, "")
	}
	return c, nil
}

// columns are what a comparison groups or labels its runs by:
// experiment_group is the run's name, as AIPerf without a classification.
var columns = []string{"model", "concurrency", "run_name", "experiment_group"}

// axisKey reads a preset's axis: "<metric>_<stat>" or concurrency.
func axisKey(s string) (compare.Key, error) {
	switch s {
	case "":
		return compare.Key{}, errors.New("missing: <metric>_<stat> (request_latency_avg) or concurrency")
	case "concurrency":
		return compare.Key{Metric: "concurrency", Stat: "value"}, nil
	}
	if i := strings.LastIndexByte(s, '_'); i > 0 && slices.Contains(presetStats, s[i+1:]) {
		return compare.Key{Metric: s[:i], Stat: s[i+1:]}, nil
	}
	return compare.Key{}, fmt.Errorf("%q: want <metric>_<stat> (request_latency_avg, time_to_first_token_p99) or concurrency", s)
}

// presetStats are the statistics a preset's axis may name.
var presetStats = []string{"avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}

// comparisonsOf are the config's multi-run figures, in its order.
func (c *Config) comparisons() []comparison {
	var out []comparison
	for _, n := range c.MultiRun {
		if i := slices.IndexFunc(c.presets, func(q comparison) bool { return q.name == n }); i >= 0 {
			out = append(out, c.presets[i])
		}
	}
	return out
}
