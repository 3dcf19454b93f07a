package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// PhaseManifestFile lists the phase-scoped exports of a run with named
// phases (AIPerf's discovery file).
const PhaseManifestFile = "phase_manifest.json"

// phaseEntry is one phase of phase_manifest.json: its identity, as AIPerf's
// manifest names it, the paths of its files (relative to the artifact
// directory; absent when not written), and its request and error counts.
type phaseEntry struct {
	PhaseIndex        int    `json:"phase_index"`
	ProfilingIndex    *int   `json:"profiling_index"` // null for a warmup
	PhaseName         string `json:"phase_name"`
	PhaseKind         string `json:"phase_kind"`
	MetricsJSON       string `json:"metrics_json"`
	MetricsCSV        string `json:"metrics_csv,omitempty"`
	ServerMetricsJSON string `json:"server_metrics_json,omitempty"`
	// The counts are absent for a phase that never began, which says so
	// and why instead.
	RequestCount      *int   `json:"request_count,omitempty"`
	ErrorRequestCount *int   `json:"error_request_count,omitempty"`
	NeverBegan        bool   `json:"never_began,omitempty"`
	NeverBeganReason  string `json:"never_began_reason,omitempty"`
}

// writePhases writes, for a run whose phases are named, each phase's own
// summary under phases/<name>/ (the JSON and CSV named as the root's, and
// the server's metrics over that phase when it scraped any), then
// phase_manifest.json listing them. The root exports stay the aggregate of
// the profiling phases. A phase that never began gets its JSON alone, with
// no figures and never_began (and why) in their place, as its manifest
// entry has.
func writePhases(dir string, run *result.Run, names Names) ([]string, error) {
	if len(run.Phases) == 0 {
		return nil, nil
	}
	var paths []string
	entries := make([]phaseEntry, 0, len(run.Phases))
	for _, ph := range run.Phases {
		if !plan.PhaseNameOK(ph.Name) {
			return paths, fmt.Errorf("phase %q: not a phase name, no directory is made of it", ph.Name)
		}
		rel := filepath.Join("phases", ph.Name)
		if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
			return paths, fmt.Errorf("create %s: %w", rel, err)
		}
		e := phaseEntry{PhaseIndex: ph.Index, PhaseName: ph.Name, PhaseKind: ph.Kind}
		if ph.ProfilingIndex >= 0 {
			e.ProfilingIndex = &ph.ProfilingIndex
		}
		own := phaseRun(run, ph)
		files := []export{{names.JSON, WriteJSON}}
		if ph.NeverBegan {
			e.NeverBegan, e.NeverBeganReason = true, neverBegan(run)
			ours := object{{"never_began", true}, {"never_began_reason", e.NeverBeganReason}}
			files = []export{{names.JSON, func(w io.Writer, run *result.Run) error { return writeJSON(w, run, ours) }}}
		} else {
			e.RequestCount, e.ErrorRequestCount = count(ph, "request_count"), count(ph, "error_request_count")
			if names.csv {
				files = append(files, export{names.CSV, WriteCSV})
			}
		}
		for _, f := range files {
			path := filepath.Join(dir, rel, f.name)
			if err := writeFile(path, func(w io.Writer) error { return f.write(w, own) }); err != nil {
				return paths, err
			}
			paths = append(paths, path)
		}
		e.MetricsJSON = filepath.ToSlash(filepath.Join(rel, names.JSON))
		if ph.NeverBegan {
			entries = append(entries, e)
			continue
		}
		if names.csv {
			e.MetricsCSV = filepath.ToSlash(filepath.Join(rel, names.CSV))
		}
		path, err := phaseServerMetrics(filepath.Join(dir, rel), run, ph.Name)
		if err != nil {
			return paths, err
		}
		if path != "" {
			paths = append(paths, path)
			e.ServerMetricsJSON = filepath.ToSlash(filepath.Join(rel, filepath.Base(path)))
		}
		entries = append(entries, e)
	}
	manifest := filepath.Join(dir, PhaseManifestFile)
	if err := WriteJSONFile(manifest, struct {
		Phases []phaseEntry `json:"phases"`
	}{entries}); err != nil {
		return paths, err
	}
	return append(paths, manifest), nil
}

// phaseRun is run as one phase's export sees it: that phase's summary and
// errors in place of the profiling ones, and none of the figures of other
// phases (warmup, time slices, the server's metrics and GPU telemetry over
// the profiling span: its own server metrics are server_metrics.json).
// The run's identity (id, times, config, audit) stays the run's.
func phaseRun(run *result.Run, ph result.PhaseResult) *result.Run {
	own := *run
	own.Profiling, own.ErrorSummary = ph.Summary, ph.ErrorSummary
	own.Warmup, own.Timeslices, own.Phases, own.Records, own.Server = nil, nil, nil, nil, nil
	return &own
}

// count is a count metric of ph's summary (0 when absent).
func count(ph result.PhaseResult, tag string) *int {
	n := 0
	if m, ok := ph.Summary.Get(tag); ok {
		n = int(m.Value)
	}
	return &n
}

// neverBegan says why a phase of run never began: the run ended before it.
func neverBegan(run *result.Run) string {
	switch {
	case run.Status == result.StatusInterrupted:
		return "the run was interrupted before it began"
	case run.Status == result.StatusFailed && run.Error != "":
		return "the run failed before it began: " + run.Error
	}
	return "the run ended before it began"
}

// phaseServerMetrics writes the server's metrics over phase into dir as
// server_metrics.json, returning its path ("" when the run scraped none,
// or none over that phase).
func phaseServerMetrics(dir string, run *result.Run, phase string) (string, error) {
	if run.Server == nil || !hasSource(run, servermetrics.SourceServer) {
		return "", nil
	}
	path := filepath.Join(dir, "server_metrics.json")
	err := writeFile(path, func(w io.Writer) error { return servermetrics.WriteJSON(w, run.Server, phase, meta(run)) })
	if errors.Is(err, servermetrics.ErrNoSamples) {
		return "", nil
	}
	return path, err
}
