package servermetrics

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"
)

// File names of AIPerf's server-metrics exports. AIPerf puts the GPU
// telemetry summary in profile_export_aiperf.json ("telemetry_data") and
// profile_export_aiperf.csv (a section), and its time series in
// FileGPUJSONL.
const (
	FileJSON     = "server_metrics_export.json"
	FileCSV      = "server_metrics_export.csv"
	FileJSONL    = "server_metrics_export.jsonl"
	FileGPUJSONL = "gpu_telemetry_export.jsonl"
)

// SchemaVersion is the version of AIPerf's server-metrics export schema
// the exports follow.
const SchemaVersion = "1.0"

// Meta is what the exports need besides the result.
type Meta struct {
	ToolVersion string    // aiperf_version
	BenchmarkID string    // benchmark_id
	Start       time.Time // the wall-clock time at the run clock's zero
	InputConfig any       // input_config (the redacted profile); left out when nil
}

// wall converts a stamp on the run's clock to Unix nanoseconds.
func (m Meta) wall(ns int64) int64 { return m.Start.UnixNano() + ns }

// isoTime formats a stamp as Python's datetime.isoformat does for AIPerf's
// start_time and end_time: in Start's location (local time for
// time.Now()), with microseconds.
func (m Meta) isoTime(ns int64) string {
	return m.Start.Add(time.Duration(ns)).Format("2006-01-02T15:04:05.000000")
}

// Stat names in the order AIPerf writes them.
var (
	gaugeKeys     = []string{"avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}
	counterKeys   = []string{"total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std"}
	histogramKeys = []string{"count", "sum", "avg", "count_rate", "sum_rate", "p1_estimate", "p5_estimate", "p10_estimate",
		"p25_estimate", "p50_estimate", "p75_estimate", "p90_estimate", "p95_estimate", "p99_estimate"}
	sliceKeys = map[string][]string{TypeCounter: {"total", "rate"}, TypeHistogram: {"count", "sum", "avg"}}
)

// statKeys are the stats a type exports, in order.
func statKeys(typ string) []string {
	switch typ {
	case TypeCounter:
		return counterKeys
	case TypeHistogram:
		return histogramKeys
	}
	return gaugeKeys
}

// object is a JSON object that keeps its keys in order.
type object []field

type field struct {
	key string
	val any
}

// MarshalJSON writes the fields in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		v, err := json.Marshal(f.val)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ordered is st's keys present among keys, in order.
func ordered(st map[string]float64, keys []string) object {
	o := object{}
	for _, k := range keys {
		if v, ok := st[k]; ok {
			o = append(o, field{k, v})
		}
	}
	return o
}

// buckets is a histogram's bucket deltas as AIPerf writes them: bound →
// count, in order.
func buckets(bs []Bucket) object {
	o := make(object, len(bs))
	for i, b := range bs {
		o[i] = field{b.LE, b.Count}
	}
	return o
}

// exported are the series an AIPerf export holds: the source's series of
// phase ("" for the span), summaries left out as AIPerf does, ordered by
// endpoint URL and labels.
func exported(r *Result, source, phase string) []Series {
	if phase == "" {
		phase = r.Span
	}
	var out []Series
	for _, s := range r.Series {
		if s.Source == source && s.Phase == phase && s.Type != TypeSummary {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Series) int {
		return cmp.Or(cmp.Compare(a.Endpoint, b.Endpoint), cmp.Compare(labelKey(a.Labels), labelKey(b.Labels)))
	})
	return out
}

// WriteJSON writes AIPerf's server_metrics_export.json for phase ("" for
// the profiling span): the summary with each endpoint's fetch figures, and
// the metrics keyed by AIPerfName (a counter without its _total, as AIPerf
// and the store and compare name it), each with a series per endpoint and
// label set holding the type's stats, a histogram's bucket deltas and the
// time slices.
func WriteJSON(w io.Writer, r *Result, phase string, m Meta) error {
	metrics := map[string]object{}
	var names []string
	series := map[string][]any{}
	for _, s := range exported(r, SourceServer, phase) {
		name := AIPerfName(s.Metric, s.Type)
		if _, ok := metrics[name]; !ok {
			names = append(names, name)
			metrics[name] = object{{"type", s.Type}, {"description", s.Description}}
			if _, unit := describe(s.Metric, s.Type); unit != "" {
				metrics[name] = append(metrics[name], field{"unit", unit})
			}
		}
		series[name] = append(series[name], jsonSeries(s, m))
	}
	slices.Sort(names)
	ms := make(object, len(names))
	for i, n := range names {
		ms[i] = field{n, append(metrics[n], field{"series", series[n]})}
	}
	doc := object{{"schema_version", SchemaVersion}, {"aiperf_version", m.ToolVersion}, {"benchmark_id", m.BenchmarkID},
		{"summary", summary(r, SourceServer, m, true)}, {"metrics", ms}}
	if m.InputConfig != nil {
		doc = append(doc, field{"input_config", m.InputConfig})
	}
	return encode(w, doc)
}

// encode writes v as indented JSON.
func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write server metrics JSON: %w", err)
	}
	return nil
}

// jsonSeries is one series of the JSON export.
func jsonSeries(s Series, m Meta) object {
	o := object{{"endpoint_url", s.Endpoint}}
	if len(s.Labels) > 0 {
		o = append(o, field{"labels", sortedLabels(s.Labels)})
	}
	o = append(o, field{"stats", ordered(s.Stats, statKeys(s.Type))})
	if s.Impossible != "" {
		o = append(o, field{"impossible", s.Impossible}) // an extension AIPerf's parser ignores
	}
	if s.Type == TypeHistogram {
		o = append(o, field{"buckets", buckets(s.Buckets)})
	}
	if len(s.Timeslices) > 0 {
		ts := make([]object, len(s.Timeslices))
		keys := sliceKeys[s.Type]
		if keys == nil {
			keys = []string{"avg", "min", "max"}
		}
		for i, t := range s.Timeslices {
			ts[i] = object{{"start_ns", m.wall(t.StartNs)}, {"end_ns", m.wall(t.EndNs)}}
			if t.Partial {
				ts[i] = append(ts[i], field{"is_complete", false})
			}
			ts[i] = append(ts[i], ordered(t.Stats, keys)...)
			if s.Type == TypeHistogram {
				ts[i] = append(ts[i], field{"buckets", buckets(t.Buckets)})
			}
		}
		o = append(o, field{"timeslices", ts})
	}
	return o
}

// sortedLabels is a label set with its names in order.
func sortedLabels(l map[string]string) object {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	o := make(object, len(keys))
	for i, k := range keys {
		o[i] = field{k, l[k]}
	}
	return o
}

// summary is the export's summary of the source's endpoints.
func summary(r *Result, source string, m Meta, info bool) object {
	configured, successful := []string{}, []string{}
	endpoints := object{}
	for _, e := range r.Endpoints {
		if e.Source != source {
			continue
		}
		configured = append(configured, e.URL)
		if e.Scrapes == 0 {
			continue
		}
		successful = append(successful, e.URL)
		secs := float64(e.LastNs-e.FirstNs) / 1e9
		ep := object{{"total_fetches", e.Scrapes + e.Failures}, {"first_fetch_ns", m.wall(e.FirstNs)}, {"last_fetch_ns", m.wall(e.LastNs)},
			{"avg_fetch_latency_ms", e.AvgLatencyMs}, {"unique_updates", e.Updates}, {"first_update_ns", m.wall(e.FirstNs)},
			{"last_update_ns", m.wall(e.LastNs)}, {"duration_seconds", secs}}
		if e.Updates > 1 {
			ep = append(ep, field{"avg_update_interval_ms", secs * 1000 / float64(e.Updates-1)})
		}
		endpoints = append(endpoints, field{e.URL, append(ep, field{"median_update_interval_ms", nil})})
	}
	o := object{{"endpoints_configured", configured}, {"endpoints_successful", successful},
		{"start_time", m.isoTime(r.StartNs)}, {"end_time", m.isoTime(r.EndNs)}}
	if info && len(endpoints) > 0 {
		o = append(o, field{"endpoint_info", endpoints})
	}
	return o
}

// displayEndpoint is an endpoint as AIPerf's tables show it: host and
// port, and the path unless it is /metrics.
func displayEndpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	if p := strings.TrimSuffix(u.Path, "/"); p != "" && p != "/metrics" {
		return u.Host + p
	}
	return u.Host
}
