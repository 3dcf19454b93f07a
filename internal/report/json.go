package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/result"
)

// SchemaVersion is the profile_export_aiperf.json schema we write (AIPerf's).
const SchemaVersion = "1.5"

// WriteJSON writes profile_export_aiperf.json in AIPerf's shape: provenance
// (schema_version, aiperf_version, benchmark_id, start_time, end_time,
// was_cancelled, run_info), one top-level block per profiling metric tag,
// the pooled accepted-draft histogram when the server reported speculative
// decoding, warmup_metrics when a warmup ran, error_summary, and
// input_config.
//
// Our extensions, which AIPerf readers ignore: control_hooks (every
// control-plane call, hooks.Call) and client_audit (result.Audit).
func WriteJSON(w io.Writer, run *result.Run) error { return writeJSON(w, run, nil) }

// writeJSON is WriteJSON with fields of ours added after run_info (which
// AIPerf's parser ignores).
func writeJSON(w io.Writer, run *result.Run, ours object) error {
	doc := object{
		{"schema_version", SchemaVersion},
		{"aiperf_version", run.ToolVersion},
		{"benchmark_id", run.BenchmarkID},
		{"start_time", timestamp(run.StartTime)},
		{"end_time", timestamp(run.EndTime)},
		{"was_cancelled", run.WasCancelled},
		{"run_info", runInfo(run)},
	}
	doc = append(doc, ours...)
	doc = append(doc, metricBlocks(run.Profiling)...)
	if h := run.Profiling.SpecDecodeHistogram; h != nil {
		doc = append(doc, field{"pooled_spec_decode_acceptance_histogram", histogramObject(h)})
	}
	if run.Warmup != nil {
		doc = append(doc, field{"warmup_metrics", metricBlocks(*run.Warmup)})
	}
	telemetry, err := telemetryData(run)
	if err != nil {
		return fmt.Errorf("write json export: %w", err)
	}
	if telemetry != nil {
		doc = append(doc, field{"telemetry_data", telemetry})
	}
	if run.Audit.Branches != nil { // a DAG run's, as AIPerf's (which leaves it out of a linear run's)
		doc = append(doc, field{"branch_stats", run.Audit.Branches})
	}
	doc = append(doc,
		field{"error_summary", nonNil(run.ErrorSummary)},
		field{"runtime_submission_invalid_reasons", []string{}},
		field{"control_hooks", nonNil(run.ControlHooks)},
		field{"client_audit", run.Audit},
		// Secrets redacted by the caller (plan.Profile.Redacted).
		field{"input_config", inputConfig(run.Config)},
	)
	if err := JSON(w, doc); err != nil {
		return fmt.Errorf("write json export: %w", err)
	}
	return nil
}

// recordBlock is a record metric's stats block: unit, then its statistics
// (statsObject).
func recordBlock(unit string, st *metrics.Stats) object {
	return append(object{{"unit", unit}}, statsObject(st)...)
}

// statsObject is a record metric's statistics, avg, min, max, p1…p99, std,
// count, sum under metrics.Stats' JSON names, in its order. A statistic
// that is not a finite number (a stored run's ±Inf, or one its store
// lacks) is null: no JSON number carries it, and 0 would be a lie.
func statsObject(st *metrics.Stats) object {
	v, t := reflect.ValueOf(*st), reflect.TypeFor[metrics.Stats]()
	out := make(object, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		f := v.Field(i)
		value := f.Interface()
		if f.Kind() == reflect.Float64 {
			value = numfmt.Null(f.Float())
		}
		out = append(out, field{name, value})
	}
	return out
}

// scalarBlock is a derived or aggregate metric's block: unit and avg only,
// avg null when it is not a finite number.
func scalarBlock(unit string, v float64) object {
	return object{{"unit", unit}, {"avg", numfmt.Null(v)}}
}

// metricBlocks returns one field per exported metric of s, keyed by tag.
func metricBlocks(s metrics.Summary) object {
	out := make(object, 0, len(s.Metrics))
	for _, m := range s.Metrics {
		if !Exported(m) {
			continue
		}
		if m.Stats != nil {
			block := recordBlock(m.Unit, m.Stats)
			block = slices.DeleteFunc(block, func(f field) bool { return !metrics.HasStat(m.Tag, f.key) })
			out = append(out, field{m.Tag, block})
			continue
		}
		out = append(out, field{m.Tag, scalarBlock(m.Unit, m.Value)})
	}
	return out
}

// RunJSON writes run as indented JSON (see JSON), as `runs show --format
// json` shows a stored run: its summaries' values and statistics that are
// not finite numbers (a stored ±Inf, or a statistic its store lacks) are
// null, which encoding/json would refuse. The summaries come after the
// run's other fields.
func RunJSON(w io.Writer, run *result.Run) error {
	return JSON(w, struct {
		*result.Run
		Profiling summaryJSON  `json:"profiling"`
		Warmup    *summaryJSON `json:"warmup,omitempty"`
	}{run, summaryJSON(run.Profiling), (*summaryJSON)(run.Warmup)})
}

// summaryJSON is a metrics.Summary in its JSON shape, a value or a
// statistic that is not a finite number null.
type summaryJSON metrics.Summary

// MarshalJSON encodes the summary as metrics.Summary's JSON.
func (s summaryJSON) MarshalJSON() ([]byte, error) {
	var ms []object
	for _, m := range s.Metrics {
		o := object{{"tag", m.Tag}, {"header", m.Header}, {"unit", m.Unit}, {"value", numfmt.Null(m.Value)}}
		if m.Stats != nil {
			o = append(o, field{"stats", statsObject(m.Stats)})
		}
		ms = append(ms, o)
	}
	out := object{{"metrics", ms}}
	if len(s.SpecDecodeHistogram) > 0 {
		out = append(out, field{"spec_decode_histogram", s.SpecDecodeHistogram})
	}
	return out.MarshalJSON()
}

// runInfo is AIPerf's run_info block (schema 1.3): trial from 0, run_label
// run_0001…, and sweep_id the UUID of the sweep or multi-run invocation (null
// for a standalone run, as AIPerf's outside its orchestrator).
func runInfo(run *result.Run) object {
	info := run.Info
	var sweepID any
	if info.SweepUUID != "" {
		sweepID = info.SweepUUID
	}
	variation := info.CellLabel
	if variation == "" {
		variation = "base"
	}
	values := make(object, 0, len(info.Params))
	for _, p := range info.Params {
		values = append(values, field{p.Name, p.Value})
	}
	var cli any
	if run.CLICommand != "" {
		cli = run.CLICommand
	}
	return object{
		{"benchmark_id", run.BenchmarkID},
		{"sweep_id", sweepID},
		{"random_seed", run.Config.RandomSeed},
		{"trial", max(info.Trial-1, 0)}, // ours counts from 1
		{"run_label", result.RunLabel(info.Trial)},
		{"variation_label", variation},
		{"variation_index", info.Variation},
		{"variation_values", values},
		{"cli_command", cli},
	}
}

// histogramObject is an accepted-draft histogram as a JSON object, its
// keys (draft counts) in numeric order.
func histogramObject(h map[string]int) object {
	keys := slices.Collect(maps.Keys(h))
	slices.SortFunc(keys, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return cmp.Or(cmp.Compare(x, y), strings.Compare(a, b))
	})
	out := make(object, len(keys))
	for i, k := range keys {
		out[i] = field{k, h[k]}
	}
	return out
}

// timestamp is t as AIPerf writes start_time and end_time, or null when
// unset: a naive datetime.fromtimestamp(ns / 1e9), local time without a
// zone, serialised as isoformat does (microseconds, left out when zero).
// The absolute times stay in the JSONL's and the control hooks' Unix ns.
func timestamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return isoLocal(t, time.Local)
}

// isoLocal formats t in loc as Python's naive datetime.isoformat: to the
// nearest microsecond, no fraction when that is zero, no zone.
func isoLocal(t time.Time, loc *time.Location) string {
	t = t.In(loc).Round(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}

// nonNil turns a nil slice into an empty one so it encodes as [] not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Ordered JSON objects.

// field is one key of an ordered JSON object.
type field struct {
	key   string
	value any
}

// object is a JSON object that keeps its keys in the order given
// (encoding/json sorts map keys).
type object []field

// MarshalJSON encodes the fields in order.
func (o object) MarshalJSON() ([]byte, error) {
	l := newLine()
	l.raw("{")
	for i, f := range o {
		if i > 0 {
			l.raw(",")
		}
		l.value(f.key)
		l.raw(":")
		l.value(f.value)
	}
	l.raw("}")
	return l.buf.Bytes(), l.err
}

// line assembles JSON from raw text and encoded values. The JSONL export
// builds its lines with it rather than through a json.Marshaler, which
// encoding/json would re-validate at twice the cost. The first encoding error
// sticks.
type line struct {
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

func newLine() *line {
	l := &line{}
	l.enc = json.NewEncoder(&l.buf)
	l.enc.SetEscapeHTML(false)
	return l
}

func (l *line) reset()       { l.buf.Reset(); l.err = nil }
func (l *line) raw(s string) { l.buf.WriteString(s) }

// value appends v's JSON encoding.
func (l *line) value(v any) {
	if l.err != nil {
		return
	}
	if l.err = l.enc.Encode(v); l.err == nil {
		l.buf.Truncate(l.buf.Len() - 1) // Encode's newline
	}
}
