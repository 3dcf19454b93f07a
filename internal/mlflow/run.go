package mlflow

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// ExportFile is AIPerf's record of the MLflow run beside the exports.
const ExportFile = "mlflow_export.json"

// DefaultArtifactGlobs are AIPerf's: the exports and the plots.
var DefaultArtifactGlobs = []string{"*.json", "*.csv", "*.jsonl", "*.parquet", "*_timeslices.*",
	"**/*.png", "**/*.jpg", "**/*.jpeg", "**/*.svg", "**/*.html"}

// Options of a logged run.
type Options struct {
	TrackingURI string // as given (credentials are used, never written)
	Experiment  string
	RunName     string
	ParentRunID string
	Tags        map[string]string // --mlflow-tag and aiperf's own
	// ArtifactDir holds the exports; Globs pick what is uploaded (nil:
	// DefaultArtifactGlobs).
	ArtifactDir string
	Globs       []string
	BenchmarkID string
	// Streaming: the live scalars include time to first chunk and per
	// output chunk.
	Streaming bool
	// Interval between live batches (0: 2 s); Queue the live scalars that
	// may wait (0: 16384).
	Interval time.Duration
	Queue    int
	Redact   func(string) string
	Warn     func(string)
}

// Run is an MLflow run being logged. It implements bench.Exporter: the
// live.* scalars of each finished request go in batches while the load
// goes, off the request path (a full queue drops and counts).
type Run struct {
	c      *Client
	o      Options
	Info   RunInfo
	Parent string // the parent run id set at creation ("" for none)

	queue   chan Metric
	done    chan struct{}
	dropped atomic.Int64
	liveErr atomic.Bool
	once    sync.Once

	// liveCtx bounds the live sends: liveCancel cuts the one in flight,
	// liveGrace after the run's interrupt (or the finish's).
	liveCtx    context.Context
	liveCancel context.CancelFunc
	unwatch    func() bool // stops watching the run's context
	graceOnce  sync.Once
	// ending: the run is ending (Finish began, or the run was
	// interrupted); a live send then left unanswered is endErr, and
	// Finish sends nothing more (set by the live goroutine before done).
	ending atomic.Bool
	endErr error

	clipWarned map[string]bool // what a warning said was clipped
}

// Start creates (or reuses) the experiment and creates the run, a child
// of ParentRunID when set (a parent that does not exist makes a root run,
// with a warning, as AIPerf does).
func Start(ctx context.Context, o Options) (*Run, error) {
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	c, err := NewClient(o.TrackingURI, o.Redact)
	if err != nil {
		return nil, err
	}
	experiment := cmpOr(o.Experiment, plan.DefaultMLflowExperiment)
	exp, err := c.ExperimentID(ctx, experiment)
	if err != nil {
		return nil, fmt.Errorf("mlflow experiment %q: %w", experiment, err)
	}
	name := cmpOr(o.RunName, "aiperf-"+o.BenchmarkID[:min(8, len(o.BenchmarkID))])
	if short, cut := clip(name, maxRunName, clipMark); cut { // a longer one fails the run's creation
		o.Warn(fmt.Sprintf("mlflow run name %q is %d characters, over MLflow's %d: the run is named %q",
			Preview(name, 60), len([]rune(name)), maxRunName, Preview(short, 60)))
		name = short
	}
	tags := tagList(o.Tags)
	cs := clipKVs(tags, "tag", maxTagValue)
	tags = append(tags, KV{"mlflow.runName", name})
	parent := o.ParentRunID
	if parent != "" {
		if _, _, _, _, err := c.GetRun(ctx, parent); IsCode(err, "RESOURCE_DOES_NOT_EXIST") {
			o.Warn(fmt.Sprintf("mlflow parent run %s not found: the run is created as a root run", parent))
			parent = ""
		}
	}
	if parent != "" {
		tags = append(tags, KV{"mlflow.parentRunId", parent})
	}
	info, err := c.CreateRun(ctx, exp, name, tags, time.Now())
	if err != nil {
		return nil, fmt.Errorf("create mlflow run %q: %w", name, err)
	}
	r := &Run{c: c, o: o, Info: info, Parent: parent}
	if info.RunName == "" {
		r.Info.RunName = name
	}
	r.warnClipped(cs)
	return r, nil
}

// Dropped is how many live scalars found the queue full.
func (r *Run) Dropped() int64 { return r.dropped.Load() }

func tagList(m map[string]string) []KV {
	out := make([]KV, 0, len(m))
	for k, v := range m {
		out = append(out, KV{k, v})
	}
	slices.SortFunc(out, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// exportFile is mlflow_export.json (AIPerf's fields).
type exportFile struct {
	TrackingURI       string   `json:"tracking_uri"`
	Experiment        string   `json:"experiment"`
	ExperimentID      string   `json:"experiment_id,omitempty"`
	RunID             string   `json:"run_id"`
	RunName           string   `json:"run_name"`
	BenchmarkID       string   `json:"benchmark_id"`
	ParentRunID       *string  `json:"parent_run_id"`
	LiveStreaming     bool     `json:"live_streaming"`
	ReusedLiveRun     bool     `json:"reused_live_run"`
	MetricKeys        []string `json:"metric_keys"`
	ParamKeys         []string `json:"param_keys"`
	TagKeys           []string `json:"tag_keys"`
	UploadedArtifacts []string `json:"uploaded_artifacts"`
	ExportedAtNs      int64    `json:"exported_at_ns"`
}

// writeExportFile writes mlflow_export.json into the artifact directory
// (atomically); the tracking URI without its credentials.
func (r *Run) writeExportFile(f exportFile) error {
	if r.o.ArtifactDir == "" {
		return nil
	}
	f.TrackingURI = plan.RedactURL(r.o.TrackingURI)
	f.Experiment = cmpOr(r.o.Experiment, plan.DefaultMLflowExperiment)
	f.ExperimentID, f.RunID, f.RunName, f.BenchmarkID = r.Info.ExperimentID, r.Info.RunID, r.Info.RunName, r.o.BenchmarkID
	if r.Parent != "" {
		f.ParentRunID = &r.Parent
	}
	f.ExportedAtNs = time.Now().UnixNano()
	for _, s := range []*[]string{&f.MetricKeys, &f.ParamKeys, &f.TagKeys, &f.UploadedArtifacts} {
		*s = nonNil(*s)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.o.ArtifactDir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(r.o.ArtifactDir, ExportFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(r.o.ArtifactDir, ExportFile))
}
