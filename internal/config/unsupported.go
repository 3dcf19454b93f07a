package config

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/notbuilt"
)

// keys lists a field's snake_case name and its aliases.
func keys(names ...string) []string { return names }

// section is the handler of a key whose value is an object with its own fields.
func (d *decoder) section(fs func() []field) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if d.mapping(v, path) {
			d.fields(v, path, fs())
		}
	}
}

// removeIt is what to do about an unsupported key that nothing else here
// does the work of.
const removeIt = "remove it from the file"

// notYet is the handler of an AIPerf key this reader knows but does not
// implement: it is refused, naming what it does and what to do instead
// (hint: the flag that does it, else removeIt when hint is ""), never
// ignored.
func (d *decoder) notYet(what, hint string) func(string, *yaml.Node) {
	if hint == "" {
		hint = removeIt
	}
	return func(path string, v *yaml.Node) {
		d.errorf(v, path, "%s is not supported yet: %s", what, hint)
	}
}

// notYetUnless is notYet, except that the value AIPerf takes by default
// (what this reader does anyway) is accepted: false for a switch, or the
// text of a scalar.
func (d *decoder) notYetUnless(def, what, hint string) func(string, *yaml.Node) {
	refuse := d.notYet(what, hint)
	return func(path string, v *yaml.Node) {
		if v.Kind == yaml.ScalarNode && (v.Value == def || def == "false" && v.ShortTag() == tagNull) {
			return
		}
		refuse(path, v)
	}
}

// notYetSections are the benchmark body's AIPerf sections this reader
// does not implement: what each is, what to do instead, or the AIPerf
// option it stands for, whose reason and alternative are the command
// line's (package notbuilt).
var notYetSections = map[string]struct{ what, hint, option string }{
	"logging":           {"logging:", "use aiperf profile -v or --log-level", ""},
	"metrics":           {"metrics: (AIPerf's metric aggregation settings)", "", ""},
	"accuracy":          {"accuracy: (accuracy benchmarks)", "", "--accuracy-benchmark"},
	"wandb":             {"wandb: (Weights & Biases upload)", "", "--wandb-project"},
	"network_latency":   {"network_latency: (network-adjusted latencies)", "use aiperf profile --network-latency-mean or --network-latency-automatic", ""},
	"endpoint_profiles": {"endpoint_profiles: (named extra endpoints)", "", ""},
	"failure_policy":    {"failure_policy:", "a failed request is recorded and the run goes on; use --failed-request-threshold to end it early", ""},
	"scenario":          {"scenario: (benchmark invariant locks)", "", "--scenario"},
	"unsafe_override":   {"unsafe_override:", "", "--unsafe-override"},
}

// notYetFields are the body's unsupported sections as fields.
func (d *decoder) notYetFields() []field {
	var fs []field
	for _, key := range slices.Sorted(maps.Keys(notYetSections)) {
		m := notYetSections[key]
		hint := m.hint
		if m.option != "" {
			hint = notbuilt.Explain(m.option)
		}
		if key == "unsafe_override" {
			fs = append(fs, field{keys(key), d.notYetUnless("false", m.what, hint)})
			continue
		}
		fs = append(fs, field{keys(key), d.notYet(m.what, hint)})
	}
	return fs
}

// durationText is AIPerf's duration string: a number with an optional
// unit (s, sec, m, min, h, hr, hour), or inf.
var durationText = regexp.MustCompile(`^(?i)(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hr|hour)?$`)

// seconds reads a duration: a number of seconds or AIPerf's duration
// string ("30s", "5m", "2h"). infOK allows "inf" (returned as +Inf).
func (d *decoder) seconds(path string, n *yaml.Node, infOK bool) (float64, bool) {
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == tagStr || d.origin[n] != "") && n.ShortTag() != tagInt && n.ShortTag() != tagFloat {
		s := strings.TrimSpace(n.Value)
		if low := strings.ToLower(s); infOK && (low == "inf" || low == "infinity") {
			return math.Inf(1), true
		}
		m := durationText.FindStringSubmatch(s)
		if m == nil {
			d.errorf(n, path, "expected seconds or a duration such as 30s, 5m or 2h, got %s", d.describe(n))
			return 0, false
		}
		x, _ := strconv.ParseFloat(m[1], 64)
		switch strings.ToLower(m[2]) {
		case "m", "min":
			x *= 60
		case "h", "hr", "hour":
			x *= 3600
		}
		return x, true
	}
	return d.float(path, n)
}

// bodyPath is where the body's keys are, for messages: benchmark, or the
// top level in the flat shape (where the user wrote them).
func (d *decoder) bodyPath() string {
	if d.body.flat {
		return ""
	}
	return "benchmark"
}
