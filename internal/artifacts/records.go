package artifacts

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// The optional files of a run.
const (
	sliceCSV = report.TimeslicesCSVFile
	gpuJSONL = servermetrics.FileGPUJSONL
)

// Bounds on what one run's files may hold.
const (
	// MaxLineBytes bounds one JSONL line (a request's inter-chunk
	// latencies make lines long; 16 MiB is millions of chunks).
	MaxLineBytes = 16 << 20
	// MaxRows bounds the requests, slice rows and GPU samples of a run.
	MaxRows = 20_000_000
	// maxFileBytes bounds any JSONL or CSV file read.
	maxFileBytes = 64 << 30
)

// jsonlLine is what the reader takes of a profile_export.jsonl line.
type jsonlLine struct {
	Metadata struct {
		Start *int64 `json:"request_start_ns"`
		End   *int64 `json:"request_end_ns"`
		Phase string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics struct {
		TTFT    *metricValue `json:"time_to_first_token"`
		ITL     *metricValue `json:"inter_token_latency"`
		Latency *metricValue `json:"request_latency"`
		OSL     *metricValue `json:"output_sequence_length"`
	} `json:"metrics"`
	Error json.RawMessage `json:"error"`
}

type metricValue struct {
	Value *float64 `json:"value"`
	Unit  string   `json:"unit"`
}

// ms is a time metric in milliseconds (NaN when absent or in an unknown
// unit).
func (m *metricValue) ms() float64 {
	if m == nil || m.Value == nil {
		return math.NaN()
	}
	switch m.Unit {
	case "ms", "":
		return *m.Value
	case "ns":
		return *m.Value / 1e6
	case "us":
		return *m.Value / 1e3
	case "s", "sec":
		return *m.Value * 1e3
	}
	return math.NaN()
}

func (m *metricValue) value() float64 {
	if m == nil || m.Value == nil {
		return math.NaN()
	}
	return *m.Value
}

// lines calls each with every non-blank line of a file of at most
// maxFileBytes, lines at most MaxLineBytes, and its number.
func lines(path string, each func(line []byte, n int) error) error {
	f, err := open(path, maxFileBytes)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			if err := each(line, n); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("read %s: line %d is longer than %d bytes", path, n+1, MaxLineBytes)
		}
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// skipped collects the lines that are not records, for a note.
type skipped struct {
	file  string
	count int
	first string
}

func (s *skipped) add(n int, err error) {
	if s.count++; s.count == 1 {
		s.first = fmt.Sprintf("line %d: %v", n, err)
	}
}

func (s *skipped) note(r *Run) {
	if s.count > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: skipped %d line(s) that are not records (%s)", s.file, s.count, s.first))
	}
}

func tooMany(path string) error {
	return fmt.Errorf("read %s: more than %d rows, more than a figure can show", path, MaxRows)
}

// readRequests reads profile_export.jsonl, a Request per line in file
// order (AIPerf's request number).
func (r *Run) readRequests(path string) error {
	skip := skipped{file: FileJSONL}
	err := lines(path, func(b []byte, n int) error {
		var l jsonlLine
		if err := json.Unmarshal(b, &l); err != nil {
			skip.add(n, err)
			return nil
		}
		if len(r.Requests) >= MaxRows {
			return tooMany(path)
		}
		q := Request{TTFTMs: l.Metrics.TTFT.ms(), ITLMs: l.Metrics.ITL.ms(), LatencyMs: l.Metrics.Latency.ms(),
			OSL: l.Metrics.OSL.value(), Phase: l.Metadata.Phase,
			Failed: len(l.Error) > 0 && !bytes.Equal(l.Error, []byte("null"))}
		if l.Metadata.Start != nil && l.Metadata.End != nil {
			q.StartNs, q.EndNs, q.Timed = *l.Metadata.Start, *l.Metadata.End, true
		}
		r.Requests = append(r.Requests, q)
		return nil
	})
	skip.note(r)
	if err != nil {
		return err
	}
	if len(r.Requests) == 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: no requests in %s", r.Dir, FileJSONL))
	}
	return nil
}

// readSlices reads the tidy timeslice CSV: Timeslice,Metric,Unit,Stat,Value.
func (r *Run) readSlices(path string) error {
	f, err := open(path, maxFileBytes)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := csv.NewReader(bufio.NewReader(f))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	cols := map[string]int{}
	for i, h := range head {
		cols[h] = i
	}
	want := []string{"Timeslice", "Metric", "Unit", "Stat", "Value"}
	for _, w := range want {
		if _, ok := cols[w]; !ok {
			return fmt.Errorf("read %s: no %q column (want %v)", path, w, want)
		}
	}
	skip := skipped{file: sliceCSV}
	for n := 2; ; n++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			skip.add(n, err)
			continue
		}
		if len(rec) < len(head) {
			skip.add(n, errors.New("too few fields"))
			continue
		}
		index, err1 := strconv.Atoi(rec[cols["Timeslice"]])
		value, err2 := strconv.ParseFloat(rec[cols["Value"]], 64)
		if err := errors.Join(err1, err2); err != nil {
			skip.add(n, err)
			continue
		}
		if len(r.Slices) >= MaxRows {
			return tooMany(path)
		}
		r.Slices = append(r.Slices, SliceRow{Index: index, Metric: rec[cols["Metric"]], Unit: rec[cols["Unit"]],
			Stat: rec[cols["Stat"]], Value: value})
	}
	skip.note(r)
	return nil
}

// gpuLine is a gpu_telemetry_export.jsonl line.
type gpuLine struct {
	Index       *int           `json:"gpu_index"`
	UUID        string         `json:"gpu_uuid"`
	TimestampNs *int64         `json:"timestamp_ns"`
	Data        map[string]any `json:"telemetry_data"`
}

// readGPU reads the GPU telemetry time series.
func (r *Run) readGPU(path string) error {
	skip := skipped{file: gpuJSONL}
	err := lines(path, func(b []byte, n int) error {
		var l gpuLine
		if err := json.Unmarshal(b, &l); err != nil || l.TimestampNs == nil {
			skip.add(n, cmpErr(err, errors.New("no timestamp_ns")))
			return nil
		}
		if len(r.GPU) >= MaxRows {
			return tooMany(path)
		}
		gpu := l.UUID
		if gpu == "" && l.Index != nil {
			gpu = strconv.Itoa(*l.Index)
		}
		values := make(map[string]float64, len(l.Data))
		for k, v := range l.Data {
			if f, ok := v.(float64); ok {
				values[k] = f
			}
		}
		r.GPU = append(r.GPU, GPUSample{TimestampNs: *l.TimestampNs, GPU: gpu, Values: values})
		return nil
	})
	skip.note(r)
	return err
}

// cmpErr is the first non-nil error.
func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
