package compare

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/store"
)

// Key names one run-level statistic: a metric tag and a stat, written
// "time_to_first_token.p99". A derived metric's single value answers "avg".
type Key struct {
	Metric string
	Stat   string
}

// String is the key as written: "metric.stat".
func (k Key) String() string { return k.Metric + "." + k.Stat }

// statNames are the statistics of a record metric's distribution;
// statValue is the single statistic of a derived or aggregate metric, which
// "avg" also answers.
var (
	statNames = []string{"avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std", "count", "sum"}
	statValue = "value"
)

// ParseKeys parses --metric values ("tag.stat", "server.FAMILY.STAT",
// "gpu.FAMILY.STAT" or a server alias; several per value separated by commas
// allowed). An unknown metric or statistic is refused with the list of the
// known ones; a server family is checked against the compared runs once they
// are loaded (CheckServerKeys).
func ParseKeys(specs []string) ([]Key, error) {
	var out []Key
	for _, spec := range specs {
		for _, s := range strings.Split(spec, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			k, err := parseKey(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s, err)
			}
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	if len(specs) > 0 && len(out) == 0 {
		return nil, errors.New("names no statistic: give metric.stat keys, e.g. time_to_first_token.p99")
	}
	return out, nil
}

// parseKey parses one "tag.stat", checking the tag against the metrics a
// run has and the statistic against what the metric offers.
func parseKey(s string) (Key, error) {
	if _, _, ok := serverSource(s); ok {
		return parseServerKey(s)
	}
	i := strings.LastIndex(s, ".")
	if i <= 0 {
		return Key{}, errors.New("want metric.stat, e.g. time_to_first_token.p99")
	}
	k := Key{Metric: s[:i], Stat: s[i+1:]}
	if tag, ok := clientAliases[strings.ToLower(k.Metric)]; ok {
		k.Metric = tag
	}
	records, scalars := metrics.RecordTags(), metrics.ScalarTags()
	switch {
	case !slices.Contains(statNames, k.Stat) && k.Stat != statValue:
		return k, fmt.Errorf("unknown statistic %q (want one of %s, or %s for a single-valued metric)",
			k.Stat, strings.Join(statNames, ", "), statValue)
	case slices.Contains(records, k.Metric):
		if k.Stat == statValue {
			return k, fmt.Errorf("%s is a distribution: use one of %s", k.Metric, strings.Join(statNames, ", "))
		}
		if !metrics.HasStat(k.Metric, k.Stat) {
			has := slices.DeleteFunc(slices.Clone(statNames), func(st string) bool { return !metrics.HasStat(k.Metric, st) })
			return k, fmt.Errorf("%s is time-weighted and has no %s: use one of %s", k.Metric, k.Stat, strings.Join(has, ", "))
		}
	case slices.Contains(scalars, k.Metric):
		if k.Stat != "avg" && k.Stat != statValue {
			return k, fmt.Errorf("%s has a single value: use %s.avg", k.Metric, k.Metric)
		}
	default:
		if near := plan.Suggest(k.Metric, slices.Concat(records, scalars)); near != "" {
			return k, fmt.Errorf("unknown metric %q%s", k.Metric, near)
		}
		return k, fmt.Errorf("unknown metric %q; the metrics are %s (statistics %s) and %s (a single value: avg); "+
			"the server's as server.FAMILY.STAT or an alias (%s), GPU telemetry as gpu.FAMILY.STAT",
			k.Metric, strings.Join(records, ", "),
			strings.Join(statNames, ", "), strings.Join(scalars, ", "), aliasList("server"))
	}
	return k, nil
}

// clientAliases are the short names the tables use for the client's
// headline metrics, accepted for them.
var clientAliases = map[string]string{
	"ttft":    metrics.TagTTFT,
	"itl":     metrics.TagITL,
	"latency": metrics.TagRequestLatency,
}

// DefaultKeys are the headline statistics compared when --metric is not given.
var DefaultKeys = []Key{
	{metrics.TagTTFT, "avg"},
	{metrics.TagTTFT, "p99"},
	{metrics.TagITL, "avg"},
	{metrics.TagRequestLatency, "p99"},
	{metrics.TagOutputTokenThroughput, "avg"},
	{metrics.TagRequestThroughput, "avg"},
	{metrics.TagErrorRequestCount, "avg"},
}

// Pareto axes of the sweep view, as AIPerf's best_configurations: maximum
// request throughput against minimum TTFT p99, or request latency p99 when
// the runs have no TTFT (non-streaming).
var (
	paretoThroughput  = Key{metrics.TagRequestThroughput, "avg"}
	paretoLatency     = Key{metrics.TagTTFT, "p99"}
	paretoLatencyElse = Key{metrics.TagRequestLatency, "p99"}
)

// Direction says which way a statistic is better.
type Direction int

// Directions.
const (
	Neutral Direction = iota
	LowerIsBetter
	HigherIsBetter
)

// String is the direction as the tables show it.
func (d Direction) String() string {
	switch d {
	case LowerIsBetter:
		return "lower"
	case HigherIsBetter:
		return "higher"
	}
	return ""
}

// MarshalText makes a Direction render as "lower", "higher" or "" in JSON.
func (d Direction) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// DirectionOf tells whether lower or higher values of k are better: as
// the metric's AIPerf direction says (metrics.BetterOf: throughputs,
// request counts, prompt-cache reads and acceptance higher; latencies,
// durations, errors, mismatches and energy per unit of work lower), or
// for a tag it does not know, by its name. Counts and sums of a
// distribution, token lengths and anything unknown are neutral. A server
// key has its alias's direction, or lower for the latencies of a family
// named like one.
func DirectionOf(k Key) Direction {
	if isServerKey(k) {
		return serverDirection(k)
	}
	m := k.Metric
	if k.Stat == "count" || k.Stat == "sum" {
		return Neutral
	}
	switch metrics.BetterOf(m) {
	case metrics.Higher:
		return HigherIsBetter
	case metrics.Lower:
		return LowerIsBetter
	}
	if metrics.Known(m) {
		return Neutral // a metric neither way is better for (a token count)
	}
	switch {
	case strings.Contains(m, "error"):
		return LowerIsBetter
	case strings.Contains(m, "throughput"), strings.Contains(m, "goodput"),
		m == metrics.TagRequestCount, m == "good_request_count", m == "good_request_fraction":
		return HigherIsBetter
	case strings.Contains(m, "latency"), strings.HasPrefix(m, "time_to_"), strings.Contains(m, "duration"),
		m == metrics.TagSendLag:
		return LowerIsBetter
	}
	return Neutral
}

// Options are the knobs of every comparison.
type Options struct {
	// Keys are the statistics to show; when empty, DefaultKeys, and the
	// server rows of DefaultServerKeys that every compared group has.
	Keys            []Key
	ConfidenceLevel float64 // for intervals and tests; 0.95 when 0
	// Threshold is the practical-effect threshold in % of the baseline
	// mean for every statistic (0: plain Welch verdicts); nil takes each
	// statistic's DefaultThreshold.
	Threshold *float64

	defaulted bool // Keys were empty: the default view
}

func (o Options) withDefaults() Options {
	if len(o.Keys) == 0 {
		o.Keys, o.defaulted = DefaultKeys, true
	}
	if o.ConfidenceLevel == 0 {
		o.ConfidenceLevel = 0.95
	}
	return o
}

// Validate checks the confidence level and the threshold.
func (o Options) Validate() error {
	if c := o.ConfidenceLevel; c != 0 && !(c > 0 && c < 1) {
		return fmt.Errorf("confidence level must be between 0 and 1 (exclusive), got %g", c)
	}
	if o.Threshold != nil {
		return checkThreshold(*o.Threshold)
	}
	return nil
}

// StatKeys lists the "metric.stat" keys to load from the store for these
// options: the shown statistics, the Pareto axes, the default server rows,
// the client-minus-server TTFT line's and those that count a run's bursts,
// a server key as the families it may read.
func (o Options) StatKeys() []string {
	o = o.withDefaults()
	keys := slices.Concat(o.Keys, []Key{paretoThroughput, paretoLatency, paretoLatencyElse, clientTTFTp50, serverTTFTp50}, burstKeys)
	if o.defaulted {
		keys = append(append(keys, goodputKey), DefaultServerKeys...)
	}
	var out []string
	for _, k := range keys {
		wanted := []string{k.String()}
		if isServerKey(k) {
			wanted = storeKeys(k)
		}
		for _, s := range wanted {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// goodputKey is shown in the default views when the runs have it (they
// were run with --goodput).
var goodputKey = Key{metrics.TagGoodput, "avg"}

// withServerRows is keys plus, in the default view, goodput when a side has
// it and the server rows that every side has (when every side has server
// metrics).
func (o Options) withServerRows(candidates []Key, sides ...[]store.RunRow) []Key {
	if !o.defaulted {
		return o.Keys
	}
	keys := slices.Clone(o.Keys)
	if slices.ContainsFunc(sides, func(runs []store.RunRow) bool { return hasValue(runs, goodputKey) }) {
		keys = append(keys, goodputKey)
	}
	return append(keys, serverRows(candidates, sides...)...)
}
