package servermetrics

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// FileParquet is AIPerf's server-metrics Parquet export.
const FileParquet = "server_metrics_export.parquet"

// parquetBatch is how many rows are buffered before they are written.
const parquetBatch = 10_000

// parquetReserved are the Parquet export's own columns: a label of one of
// these names is left out, as AIPerf does.
var parquetReserved = []string{"endpoint_url", "metric_name", "metric_type", "unit", "description", "timestamp_ns",
	"value", "sum", "count", "bucket_le", "bucket_count"}

// WriteParquet writes AIPerf's server_metrics_export.parquet: the server
// endpoints' scrapes over the profiling span (warmup left out), a row per
// series per scrape, a histogram's a row per bucket, in AIPerf's normalized
// schema: endpoint_url, metric_name, metric_type, unit, description,
// timestamp_ns (wall clock), a column per label key (sorted; null where a
// series lacks it), then value (a gauge's sample, a counter's increase
// since the span's reference scrape, a fall counted as 0), and for a
// histogram sum and count (increases) and bucket_le and bucket_count (the
// bucket's cumulative increase); every column nullable, Snappy-compressed,
// with AIPerf's aiperf.* file metadata. A span without samples writes
// nothing and returns ErrNoSamples, as AIPerf skips the file.
func WriteParquet(w io.Writer, r *Result, m Meta) error {
	if r.timeline == nil {
		return ErrNoSamples
	}
	labels := parquetLabels(r)
	pw := newParquetWriter(w, labels)
	var rows int
	batch := make([]parquet.Row, 0, parquetBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if rows == 0 {
			setParquetMetadata(pw.w, r, m, labels)
		}
		if _, err := pw.w.WriteRows(batch); err != nil {
			return fmt.Errorf("write server metrics parquet: %w", err)
		}
		rows += len(batch)
		batch = batch[:0]
		return nil
	}
	for ei, b := range r.timeline.endpoints {
		if r.Endpoints[ei].Source != SourceServer {
			continue
		}
		sp, ok := b.span(r.timeline.span, ei)
		if !ok {
			continue
		}
		for _, s := range b.order {
			if s.typ == TypeSummary {
				continue
			}
			for row := range pw.seriesRows(r.Endpoints[ei].URL, s, sp, m) {
				if batch = append(batch, row); len(batch) == parquetBatch {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if rows == 0 {
		return ErrNoSamples
	}
	if err := pw.w.Close(); err != nil {
		return fmt.Errorf("write server metrics parquet: %w", err)
	}
	return nil
}

// parquetLabels are the label keys of the server endpoints' series, sorted,
// AIPerf's reserved column names left out.
func parquetLabels(r *Result) []string {
	seen := map[string]bool{}
	for ei, b := range r.timeline.endpoints {
		if r.Endpoints[ei].Source != SourceServer {
			continue
		}
		for _, s := range b.order {
			for k := range s.labels {
				if !slices.Contains(parquetReserved, k) {
					seen[k] = true
				}
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// parquetWriter writes the rows of one file: labels are its label columns,
// between timestamp_ns and value.
type parquetWriter struct {
	w      *parquet.Writer
	labels []string
}

func newParquetWriter(w io.Writer, labels []string) *parquetWriter {
	str, f64 := parquet.Optional(parquet.String()), parquet.Optional(parquet.Leaf(parquet.DoubleType))
	cols := columns{{"endpoint_url", str}, {"metric_name", str}, {"metric_type", str}, {"unit", str},
		{"description", str}, {"timestamp_ns", parquet.Optional(parquet.Int(64))}}
	for _, l := range labels {
		cols = append(cols, column{l, str})
	}
	cols = append(cols, column{"value", f64}, column{"sum", f64}, column{"count", f64}, column{"bucket_le", str},
		column{"bucket_count", f64})
	schema := parquet.NewSchema("schema", cols)
	return &parquetWriter{w: parquet.NewWriter(w, schema, parquet.Compression(&parquet.Snappy)), labels: labels}
}

// seriesRows yields the series' rows over span sp: a gauge's (and an
// unknown's) samples, a counter's increases, a histogram's buckets.
func (pw *parquetWriter) seriesRows(endpoint string, s *seriesBuf, sp span, m Meta) func(func(parquet.Row) bool) {
	_, unit := describe(s.fam.name, s.typ)
	head := []parquet.Value{text(endpoint), text(s.fam.name), text(s.typ), text(unit), text(s.fam.help), {}}
	for _, l := range pw.labels {
		v, ok := s.labels[l]
		if !ok {
			head = append(head, parquet.NullValue())
		} else {
			head = append(head, text(v))
		}
	}
	row := func(t int64, value, sum, count float64, le string, bucket float64) parquet.Row {
		r := make(parquet.Row, 0, len(head)+5)
		r = append(r, head...)
		r[5] = parquet.Int64Value(m.wall(sp.times[t]))
		r = append(r, num(value), num(sum), num(count), text(le), num(bucket))
		for i := range r {
			def := 1
			if r[i].IsNull() {
				def = 0
			}
			r[i] = r[i].Level(0, def, i)
		}
		return r
	}
	return func(yield func(parquet.Row) bool) {
		if s.count == nil {
			ref := s.reference(sp)
			for i := sp.lo; i <= sp.hi; i++ {
				v := s.vals[i]
				if math.IsNaN(v) {
					continue
				}
				if s.typ == TypeCounter {
					v = max(v-ref, 0)
				}
				if !yield(row(int64(i), v, math.NaN(), math.NaN(), "", math.NaN())) {
					return
				}
			}
			return
		}
		k := s.stride()
		ref := sp.ref
		for ref <= sp.hi && (math.IsNaN(s.count[ref]) || len(s.cells) < (ref+1)*k) {
			ref++
		}
		for i := sp.lo; i <= sp.hi; i++ {
			if ref > sp.hi || math.IsNaN(s.count[i]) || len(s.cells) < (i+1)*k {
				continue
			}
			sum, count := max(s.sum[i]-s.sum[ref], 0), max(s.count[i]-s.count[ref], 0)
			for j, le := range s.bounds {
				if !yield(row(int64(i), math.NaN(), sum, count, formatLE(le), max(s.cells[i*k+j]-s.cells[ref*k+j], 0))) {
					return
				}
			}
		}
	}
}

// reference is a counter's value at the span's reference scrape, else its
// first sample in the span (AIPerf's fallback).
func (s *seriesBuf) reference(sp span) float64 {
	if v := s.vals[sp.ref]; !math.IsNaN(v) {
		return v
	}
	for i := sp.lo; i <= sp.hi; i++ {
		if !math.IsNaN(s.vals[i]) {
			return s.vals[i]
		}
	}
	return math.NaN()
}

// text is a string cell, null when empty.
func text(s string) parquet.Value {
	if s == "" {
		return parquet.NullValue()
	}
	return parquet.ByteArrayValue([]byte(s))
}

// num is a double cell, null when NaN.
func num(v float64) parquet.Value {
	if math.IsNaN(v) {
		return parquet.NullValue()
	}
	return parquet.DoubleValue(v)
}

// setParquetMetadata sets AIPerf's aiperf.* key/value metadata.
func setParquetMetadata(w *parquet.Writer, r *Result, m Meta, labels []string) {
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	w.SetKeyValueMetadata("aiperf.schema_version", "1.0")
	w.SetKeyValueMetadata("aiperf.version", m.ToolVersion)
	w.SetKeyValueMetadata("aiperf.benchmark_id", m.BenchmarkID)
	w.SetKeyValueMetadata("aiperf.export_timestamp_utc", time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00"))
	w.SetKeyValueMetadata("aiperf.exporter", "ServerMetricsParquetExporter")
	sp := r.timeline.span
	w.SetKeyValueMetadata("aiperf.time_filter_start_ns", strconv.FormatInt(m.wall(sp.begin), 10))
	w.SetKeyValueMetadata("aiperf.time_filter_end_ns", strconv.FormatInt(m.wall(sp.end), 10))
	w.SetKeyValueMetadata("aiperf.profiling_duration_ns", strconv.FormatInt(sp.end-sp.begin, 10))
	w.SetKeyValueMetadata("aiperf.profiling_duration_seconds", strconv.FormatFloat(float64(sp.end-sp.begin)/1e9, 'g', -1, 64))
	if m.InputConfig != nil {
		w.SetKeyValueMetadata("aiperf.input_config", js(m.InputConfig))
	}
	var urls []string
	types := map[string]int{TypeGauge: 0, TypeCounter: 0, TypeHistogram: 0, TypeUnknown: 0}
	var total int
	for ei, b := range r.timeline.endpoints {
		if r.Endpoints[ei].Source != SourceServer {
			continue
		}
		urls = append(urls, r.Endpoints[ei].URL)
		for _, s := range b.order {
			if _, ok := types[s.typ]; ok {
				types[s.typ]++
				total++
			}
		}
	}
	slices.Sort(urls)
	w.SetKeyValueMetadata("aiperf.endpoint_urls", js(urls))
	w.SetKeyValueMetadata("aiperf.endpoint_count", strconv.Itoa(len(urls)))
	w.SetKeyValueMetadata("aiperf.label_columns", js(labels))
	w.SetKeyValueMetadata("aiperf.label_count", strconv.Itoa(len(labels)))
	w.SetKeyValueMetadata("aiperf.metric_count", strconv.Itoa(total))
	w.SetKeyValueMetadata("aiperf.metric_type_counts", js(types))
	w.SetKeyValueMetadata("aiperf.schema_note", "Label columns vary by endpoint/model. Use union_by_name=true for cross-file queries.")
}

// columns is a Parquet group whose fields keep their order (parquet.Group
// sorts them by name): AIPerf's column order.
type columns []column

// column is a named field of columns.
type column struct {
	name string
	parquet.Node
}

func (c column) Name() string                      { return c.name }
func (c column) Value(reflect.Value) reflect.Value { return reflect.Value{} }

func (columns) ID() int                     { return 0 }
func (c columns) String() string            { return "group(" + strings.Join(c.names(), ",") + ")" }
func (columns) Type() parquet.Type          { return parquet.Group{}.Type() }
func (columns) Optional() bool              { return false }
func (columns) Repeated() bool              { return false }
func (columns) Required() bool              { return true }
func (columns) Leaf() bool                  { return false }
func (columns) Encoding() encoding.Encoding { return nil }
func (columns) Compression() compress.Codec { return nil }
func (columns) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }
func (c columns) Fields() []parquet.Field {
	out := make([]parquet.Field, len(c))
	for i, f := range c {
		out[i] = f
	}
	return out
}

func (c columns) names() []string {
	out := make([]string, len(c))
	for i, f := range c {
		out[i] = f.name
	}
	return out
}
