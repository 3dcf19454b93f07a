package compare

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/store"
)

// Server and GPU keys name what the server scraped during a run's profiling
// phase: "server.FAMILY.STAT" for a Prometheus family of the inference
// server (server.vllm:kv_cache_usage_perc.max), "gpu.FAMILY.STAT" for a DCGM
// exporter's (gpu.DCGM_FI_DEV_GPU_UTIL.avg), or an alias of a known family
// (server.kv_cache_usage.max). A run has one series per endpoint and label
// set of a family; a key reduces them to one value per run:
//
//   - delta, rate (counters), count, sum (histograms): the sum;
//   - max: the largest; min: the smallest; std: the largest;
//   - avg: a histogram's Σsum / Σcount, else the mean of the series' avg;
//   - p50, p90, p95, p99: the series' own when one series has observations;
//     with several, a gauge takes the largest and a histogram the mean of
//     the series' quantiles weighted by their counts, an estimate of the
//     pooled quantile (exact when the series share one distribution, and
//     the pooled quantile always lies between their smallest and largest).
//
// Values stay in the family's unit (seconds, ratios 0..1); aliases convert
// seconds to ms and ratios to %.

// Statistics of server keys, by the type of their family.
var (
	gaugeStats     = []string{"avg", "min", "max", "std", "p50", "p90", "p99"}
	counterStats   = []string{"delta", "rate"}
	histogramStats = []string{"count", "sum", "avg", "p50", "p90", "p95", "p99"}
	latencyStats   = []string{"avg", "p50", "p90", "p95", "p99"}
	ratioStats     = []string{"avg"}
	serverStats    = []string{"avg", "min", "max", "std", "p50", "p90", "p95", "p99", "delta", "rate", "count", "sum"}
)

// family is where an alias takes its value in one server's metrics.
type family struct {
	metric string
	per    string  // when set: 100 × Σdelta(metric) / Σdelta(per), a hit rate in %
	stat   string  // read this statistic whatever the key asks ("" = the key's)
	scale  float64 // multiply by this (0 = 1)
	ms     bool    // a duration in seconds (or ms, as its unit says) shown in ms
}

// alias is a friendly name for a quantity that the known servers expose
// under their own families, tried in order: the first a run has answers.
type alias struct {
	source      string // servermetrics.SourceServer or SourceGPU
	name        string
	short       string // column title in the sweep view
	stats       []string
	unit        string    // of the value; a rate adds "/s"
	better      Direction // for every statistic but count, sum and delta
	deltaBetter Direction
	from        []family
}

// aliases are the known quantities, kept few: those the default views and
// `aiperf runs show` use, and a handful worth asking for by name.
var aliases = []alias{
	{source: "server", name: "running", short: "running", stats: gaugeStats, unit: "requests", from: []family{
		{metric: "vllm:num_requests_running"}, {metric: "sglang:num_running_reqs"}, {metric: "llamacpp:requests_processing"}}},
	{source: "server", name: "waiting", short: "waiting", stats: gaugeStats, unit: "requests", better: LowerIsBetter, from: []family{
		{metric: "vllm:num_requests_waiting"}, {metric: "sglang:num_queue_reqs"}, {metric: "llamacpp:requests_deferred"}}},
	{source: "server", name: "kv_cache_usage", short: "KV usage", stats: gaugeStats, unit: "%", from: []family{
		{metric: "vllm:kv_cache_usage_perc", scale: 100}, {metric: "vllm:gpu_cache_usage_perc", scale: 100},
		{metric: "sglang:token_usage", scale: 100}, {metric: "llamacpp:kv_cache_usage_ratio", scale: 100}}},
	{source: "server", name: "prefix_cache_hit_rate", short: "prefix cache hit %", stats: ratioStats, unit: "%", from: []family{
		{metric: "vllm:prefix_cache_hits", per: "vllm:prefix_cache_queries"},
		{metric: "vllm:gpu_prefix_cache_hit_rate", stat: "avg", scale: 100},
		{metric: "sglang:cache_hit_rate", stat: "avg", scale: 100}}},
	{source: "server", name: "preemptions", short: "preemptions", stats: counterStats, unit: "preemptions",
		better: LowerIsBetter, deltaBetter: LowerIsBetter, from: []family{{metric: "vllm:num_preemptions"}}},
	{source: "server", name: "prompt_tokens", short: "prompt tokens", stats: counterStats, unit: "tokens", better: HigherIsBetter, from: []family{
		{metric: "vllm:prompt_tokens"}, {metric: "sglang:prompt_tokens"}, {metric: "llamacpp:prompt_tokens"}}},
	{source: "server", name: "generation_tokens", short: "gen tokens", stats: counterStats, unit: "tokens", better: HigherIsBetter, from: []family{
		{metric: "vllm:generation_tokens"}, {metric: "sglang:generation_tokens"}, {metric: "llamacpp:tokens_predicted"}}},
	{source: "server", name: "ttft", short: "server TTFT", stats: latencyStats, unit: "ms", better: LowerIsBetter, from: []family{
		{metric: "vllm:time_to_first_token_seconds", ms: true}, {metric: "sglang:time_to_first_token_seconds", ms: true},
		{metric: "dynamo_frontend_time_to_first_token_seconds", ms: true}}},
	{source: "server", name: "itl", short: "server ITL", stats: latencyStats, unit: "ms", better: LowerIsBetter, from: []family{
		{metric: "vllm:inter_token_latency_seconds", ms: true}, {metric: "vllm:time_per_output_token_seconds", ms: true},
		{metric: "sglang:inter_token_latency_seconds", ms: true}, {metric: "sglang:time_per_output_token_seconds", ms: true},
		{metric: "dynamo_frontend_inter_token_latency_seconds", ms: true}}},
	{source: "server", name: "e2e_latency", short: "server e2e", stats: latencyStats, unit: "ms", better: LowerIsBetter, from: []family{
		{metric: "vllm:e2e_request_latency_seconds", ms: true}, {metric: "sglang:e2e_request_latency_seconds", ms: true},
		{metric: "dynamo_frontend_request_duration_seconds", ms: true}}},
	{source: "gpu", name: "utilization", short: "GPU util", stats: gaugeStats, unit: "%", from: []family{{metric: "DCGM_FI_DEV_GPU_UTIL"}}},
	{source: "gpu", name: "memory_used", short: "GPU mem", stats: gaugeStats, unit: "MiB", from: []family{{metric: "DCGM_FI_DEV_FB_USED"}}},
	{source: "gpu", name: "power", short: "GPU power", stats: gaugeStats, unit: "W", from: []family{{metric: "DCGM_FI_DEV_POWER_USAGE"}}},
	{source: "gpu", name: "sm_clock", short: "SM clock", stats: gaugeStats, unit: "MHz", from: []family{{metric: "DCGM_FI_DEV_SM_CLOCK"}}},
	{source: "gpu", name: "temperature", short: "GPU temp", stats: gaugeStats, unit: "C", from: []family{{metric: "DCGM_FI_DEV_GPU_TEMP"}}},
}

// DefaultServerKeys are the server rows the default view of `compare` adds
// when every compared group has server metrics.
var DefaultServerKeys = []Key{
	{"server.prefix_cache_hit_rate", "avg"},
	{"server.kv_cache_usage", "max"},
	{"server.running", "avg"},
	{"server.ttft", "p50"},
}

// HeadlineServerKeys are what `aiperf runs show` lists of a run's server
// metrics, those it has.
var HeadlineServerKeys = []Key{
	{"server.running", "avg"}, {"server.running", "max"}, {"server.waiting", "avg"}, {"server.waiting", "max"},
	{"server.kv_cache_usage", "max"}, {"server.prefix_cache_hit_rate", "avg"}, {"server.preemptions", "delta"},
	{"server.ttft", "p50"}, {"server.ttft", "p99"}, {"server.itl", "p50"}, {"server.itl", "p99"},
	{"server.e2e_latency", "p50"}, {"server.e2e_latency", "p99"},
	{"server.prompt_tokens", "delta"}, {"server.generation_tokens", "delta"}, {"server.generation_tokens", "rate"},
	{"gpu.utilization", "avg"}, {"gpu.memory_used", "max"}, {"gpu.power", "avg"},
}

// Keys of the client-minus-server TTFT line.
var (
	clientTTFTp50 = Key{"time_to_first_token", "p50"}
	serverTTFTp50 = Key{"server.ttft", "p50"}
	prefixHitRate = Key{"server.prefix_cache_hit_rate", "avg"}
)

// promName is a Prometheus metric name.
var promName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// serverSource returns the source and family (or alias) of a server key;
// ok is false for a client key.
func serverSource(metric string) (source, name string, ok bool) {
	source, name, _ = strings.Cut(metric, ".")
	return source, name, source == servermetrics.SourceServer || source == servermetrics.SourceGPU
}

// isServerKey tells a server or GPU key from a client one.
func isServerKey(k Key) bool {
	_, _, ok := serverSource(k.Metric)
	return ok
}

func findAlias(source, name string) *alias {
	for i := range aliases {
		if aliases[i].source == source && aliases[i].name == name {
			return &aliases[i]
		}
	}
	return nil
}

// aliasOf is k's alias, nil for a family name.
func aliasOf(k Key) *alias {
	source, name, _ := serverSource(k.Metric)
	return findAlias(source, name)
}

// parseServerKey parses "server.NAME.STAT" or "gpu.NAME.STAT"; a
// single-valued alias needs no statistic.
func parseServerKey(s string) (Key, error) {
	source, rest, _ := strings.Cut(s, ".")
	if a := findAlias(source, rest); a != nil && len(a.stats) == 1 {
		return Key{Metric: source + "." + rest, Stat: a.stats[0]}, nil
	}
	i := strings.LastIndex(rest, ".")
	if i <= 0 {
		return Key{}, fmt.Errorf("want %s.METRIC.STAT, e.g. %s", source, exampleKey(source))
	}
	name, stat := rest[:i], rest[i+1:]
	if slices.Contains(counterStats, stat) {
		// only a counter has these: its one name is AIPerf's, without _total
		name = servermetrics.AIPerfName(name, servermetrics.TypeCounter)
	}
	k := Key{Metric: source + "." + name, Stat: stat}
	if a := findAlias(source, name); a != nil {
		if !slices.Contains(a.stats, k.Stat) {
			return k, fmt.Errorf("unknown statistic %q of %s (want one of %s)", k.Stat, k.Metric, strings.Join(a.stats, ", "))
		}
		return k, nil
	}
	if !promName.MatchString(name) {
		return k, fmt.Errorf("%q is not a Prometheus metric name; the %s aliases are %s", name, source, aliasList(source))
	}
	if !slices.Contains(serverStats, k.Stat) {
		return k, fmt.Errorf("unknown statistic %q (a gauge has %s; a counter %s; a histogram %s)", k.Stat,
			strings.Join(gaugeStats, ", "), strings.Join(counterStats, ", "), strings.Join(histogramStats, ", "))
	}
	return k, nil
}

func exampleKey(source string) string {
	if source == servermetrics.SourceGPU {
		return "gpu.utilization.avg or gpu.DCGM_FI_DEV_GPU_UTIL.avg"
	}
	return "server.ttft.p50 or server.vllm:kv_cache_usage_perc.max"
}

// aliasList lists the aliases of a source with their statistics.
func aliasList(source string) string {
	var out []string
	for _, a := range aliases {
		if a.source == source {
			out = append(out, fmt.Sprintf("%s.%s (%s)", a.source, a.name, strings.Join(a.stats, ", ")))
		}
	}
	return strings.Join(out, ", ")
}

// storeKeys are the keys to load from the store for a server key: one per
// family it may read.
func storeKeys(k Key) []string {
	source, _, _ := serverSource(k.Metric)
	a := aliasOf(k)
	if a == nil {
		return []string{k.String()} // the store finds a counter by either spelling
	}
	var out []string
	for _, f := range a.from {
		out = append(out, source+"."+f.metric+"."+k.Stat)
		if f.per != "" {
			out = append(out, source+"."+f.per+"."+k.Stat)
		}
	}
	return out
}

// serverUnit is the unit of k's values: the alias's, or the family's as
// the collector named it (a rate per second).
func serverUnit(k Key, sides ...[]store.RunRow) string {
	if a := aliasOf(k); a != nil {
		if k.Stat == "rate" {
			return a.unit + "/s"
		}
		return a.unit
	}
	source, name, _ := serverSource(k.Metric)
	unit := ""
	for _, runs := range sides {
		for i := range runs {
			if sel := selectSeries(runs[i].Server, source, name); len(sel) > 0 && unit == "" {
				unit = sel[0].Unit
				if isHistogram(sel[0]) && k.Stat == "count" {
					unit = ""
				}
			}
		}
	}
	if k.Stat == "rate" {
		return unit + "/s"
	}
	return unit
}

// serverDirection says which way a server statistic is better: the alias's
// direction, or lower for the latencies of a family named like one.
func serverDirection(k Key) Direction {
	if k.Stat == "count" || k.Stat == "sum" {
		return Neutral
	}
	if a := aliasOf(k); a != nil {
		if k.Stat == "delta" {
			return a.deltaBetter
		}
		return a.better
	}
	if k.Stat == "delta" || k.Stat == "rate" {
		return Neutral
	}
	_, name, _ := serverSource(k.Metric)
	for _, s := range []string{"latency", "time_to_first_token", "time_per_output_token", "inter_token"} {
		if strings.Contains(name, s) {
			return LowerIsBetter
		}
	}
	return Neutral
}

func aliasNames(source string) []string {
	var out []string
	for _, a := range aliases {
		if a.source == source {
			out = append(out, a.name)
		}
	}
	return out
}
