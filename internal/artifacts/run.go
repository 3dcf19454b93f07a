package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// Run is what one artifact directory holds.
type Run struct {
	Dir string
	// Aggregate marks a sweep cell's aggregate over trials: its Stats are
	// the trials' means with confidence intervals, its requests are its
	// Trials'.
	Aggregate bool
	Trials    []*Run
	// N is the number of trials behind Stats (1 for a run).
	N           int
	Model       string
	Concurrency int // 0 when unknown
	// Stats maps "metric.stat" (time_to_first_token.p99,
	// request_throughput.avg) to its value; Units a metric tag to its unit.
	Stats map[string]Value
	Units map[string]string
	// GPUs is the number of GPUs the run's telemetry saw (0: none).
	GPUs int
	// SliceSeconds is the --slice-duration of Slices (0: unknown).
	SliceSeconds float64
	Requests     []Request
	Slices       []SliceRow
	GPU          []GPUSample
	Hooks        []Hook
	// Notes say what was skipped while reading.
	Notes []string
}

// Value is a statistic: a run's value, or an aggregate's mean over trials
// with its confidence interval (Low and High NaN for a run).
type Value struct {
	Mean, Low, High float64
}

// single is a run's value, without an interval.
func single(v float64) Value { return Value{Mean: v, Low: math.NaN(), High: math.NaN()} }

// Stat is the value of metric.stat; a derived metric's "avg" also answers
// "value".
func (r *Run) Stat(metric, stat string) (Value, bool) {
	v, ok := r.Stats[metric+"."+stat]
	if !ok && stat == "value" {
		v, ok = r.Stats[metric+".avg"]
	}
	return v, ok
}

// Request is one line of profile_export.jsonl. Times are wall-clock
// nanoseconds; the metrics are in ms (OSL in tokens), NaN when the line has
// none (a failed request has no TTFT).
type Request struct {
	StartNs, EndNs int64
	Timed          bool // the line had both times
	TTFTMs         float64
	ITLMs          float64
	LatencyMs      float64
	OSL            float64
	Failed         bool
	Phase          string // benchmark_phase: profiling (or warmup)
}

// SliceRow is one row of profile_export_aiperf_timeslices.csv.
type SliceRow struct {
	Index  int
	Metric string // display name: "Time to First Token"
	Unit   string
	Stat   string
	Value  float64
}

// GPUSample is one line of gpu_telemetry_export.jsonl: a GPU's metrics
// (nvidia_gpu_utilization, …, in AIPerf's units) at a wall-clock time.
type GPUSample struct {
	TimestampNs int64
	GPU         string // its UUID, or index
	Values      map[string]float64
}

// Hook is a control-hook call our profile_export_aiperf.json records.
type Hook struct {
	Hook        string `json:"hook"`
	OK          bool   `json:"ok"`
	StartedAtNs int64  `json:"started_at_ns"`
}

// Load reads the run in dir (a directory Find returned): an aggregate's
// file and its trials, or a run's records, statistics, timeslices, GPU
// telemetry and hook calls. A missing optional file is no error; an
// unreadable required one is, naming it.
func Load(dir string) (*Run, error) {
	r := &Run{Dir: dir, N: 1, Stats: map[string]Value{}, Units: map[string]string{}}
	if exists(dir, FileAggregate) && !exists(dir, FileJSONL) {
		if err := r.readAggregate(filepath.Join(dir, FileAggregate)); err != nil {
			return nil, err
		}
		for _, t := range trialDirs(dir) {
			tr, err := Load(t)
			if err != nil {
				return nil, err
			}
			r.Trials = append(r.Trials, tr)
			r.Notes = append(r.Notes, tr.Notes...)
			if r.Model == "" {
				r.Model = tr.Model
			}
			r.GPUs = max(r.GPUs, tr.GPUs)
		}
		return r, nil
	}
	if err := r.readJSON(filepath.Join(dir, FileJSON)); err != nil {
		return nil, err
	}
	if err := r.readRequests(filepath.Join(dir, FileJSONL)); err != nil {
		return nil, err
	}
	for _, opt := range []struct {
		name string
		read func(string) error
	}{{sliceCSV, r.readSlices}, {gpuJSONL, r.readGPU}} {
		err := opt.read(filepath.Join(dir, opt.name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return r, nil
}

// open opens a file for reading, refusing one that is not a regular file
// or larger than limit bytes.
func open(path string, limit int64) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	case !st.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("read %s: not a regular file", path)
	case st.Size() > limit:
		f.Close()
		return nil, fmt.Errorf("read %s: %d bytes, more than the %d this reader takes", path, st.Size(), limit)
	}
	return f, nil
}
