// Package plottest makes synthetic sweeps for the tests and benchmarks of
// the figures and the HTML report: runs with summaries, records and
// control-hook calls shaped like a real sweep's, in a real store file
// (Save) or as the export files a sweep leaves (Export), without a server.
package plottest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// Sweep describes a synthetic sweep: cells at concurrency 1, 2, ...; each
// trial's TTFT is TTFTMs plus noise, rising slowly with concurrency, and its
// throughput grows with concurrency.
type Sweep struct {
	Name    string
	Cells   int
	Trials  int
	TTFTMs  float64
	Records int // per run (default 20)
	Seed    uint64
}

const wallStart = int64(1_800_000_000_000_000_000)

// Save stores the sweep and returns its id.
func Save(ctx context.Context, db *store.DB, s Sweep) (int64, error) {
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: s.Name, Trials: s.Trials})
	if err != nil {
		return 0, err
	}
	err = each(s, id, func(_ []*result.Run, r *result.Run) error {
		if _, err := db.SaveRun(ctx, r, ""); err != nil {
			return fmt.Errorf("save %s %s trial %d: %w", s.Name, r.Info.CellLabel, r.Info.Trial, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return id, db.FinishSweep(ctx, id, result.StatusComplete)
}

// Export writes the sweep's runs as files, in the layout `aiperf sweep`
// leaves: each cell's trials in <dir>/<cell>/trial_NNNN/ (report.WriteAll's
// exports) and the cell's aggregate beside them (runner.Aggregates); with
// one trial, the run's exports in <dir>/<cell>/, as a comma-list sweep.
func Export(dir string, s Sweep) error {
	return each(s, 0, func(cell []*result.Run, r *result.Run) error {
		cellDir := filepath.Join(dir, plan.DirName(r.Info.CellLabel))
		runDir := cellDir
		if s.Trials > 1 {
			runDir = filepath.Join(cellDir, fmt.Sprintf("trial_%04d", r.Info.Trial))
		}
		out := *r
		out.Records = slices.Clone(r.Records)
		for i := range out.Records { // each record's send on the wall clock, as a run exports it
			out.Records[i].WallStartNs = wallStart + out.Records[i].SentNs
		}
		if _, err := report.WriteAll(runDir, &out); err != nil {
			return err
		}
		if s.Trials < 2 || r.Info.Trial < s.Trials {
			return nil
		}
		agg := runner.Aggregates(plan.Cell{ID: r.Info.CellID, Label: r.Info.CellLabel, Params: r.Info.Params}, cell, s.Trials, 0.95)
		b, err := json.Marshal(agg)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(cellDir, runner.AggregateFile), b, 0o644)
	})
}

// each makes the sweep's runs, cell by cell and trial by trial, and gives
// each to f with its cell's runs so far (itself included).
func each(s Sweep, sweepID int64, f func(cell []*result.Run, r *result.Run) error) error {
	if s.Records == 0 {
		s.Records = 20
	}
	rng := rand.New(rand.NewPCG(s.Seed, 7))
	for i := range s.Cells {
		conc := i + 1
		params := []plan.Param{{Name: "concurrency", Value: float64(conc)}}
		cell := plan.Cell{ID: plan.CellID(s.Name, params), Label: plan.CellLabel(params), Index: i, Params: params}
		var runs []*result.Run
		for trial := 1; trial <= s.Trials; trial++ {
			ttft := s.TTFTMs*(1+0.02*float64(conc)) + rng.NormFloat64()*0.5
			rps := float64(conc) * 1000 / (ttft + 100) * (1 + rng.NormFloat64()*0.01)
			r := run(s, sweepID, cell, trial, ttft, rps)
			runs = append(runs, r)
			if err := f(runs, r); err != nil {
				return err
			}
		}
	}
	return nil
}

func run(s Sweep, sweepID int64, cell plan.Cell, trial int, ttft, rps float64) *result.Run {
	cfg := plan.NewProfile()
	cfg.Model, cfg.URL, cfg.Streaming = []string{"mock-model"}, []string{"http://127.0.0.1:8000"}, true
	cfg.Concurrency = plan.Ptr(int(cell.Params[0].Value.(float64)))
	cfg.OutputTokensMean = plan.Ptr(16)
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	st := func(avg, p99 float64) *metrics.Stats {
		return &metrics.Stats{Avg: avg, Min: avg * 0.9, Max: p99 * 1.05, P50: avg, P90: (avg + p99) / 2, P99: p99,
			Std: avg / 20, Count: s.Records, Sum: avg * float64(s.Records)}
	}
	r := &result.Run{
		Config: cfg, Status: result.StatusComplete, StartTime: start, EndTime: start.Add(time.Minute),
		Info: result.TrialInfo{SweepID: sweepID, CellID: cell.ID, CellLabel: cell.Label, Params: cell.Params, Trial: trial},
		Audit: result.Audit{Mode: "concurrency", KVReset: result.ResetVerified, KVResetDetail: "no prompt was served from the prefix cache",
			KVResetEvidence: []string{result.EvidenceCachedTokens}},
		Profiling: metrics.Summary{Metrics: []metrics.Metric{
			{Tag: metrics.TagTTFT, Header: "Time to First Token", Unit: "ms", Stats: st(ttft, ttft*1.2)},
			{Tag: metrics.TagITL, Header: "Inter Token Latency", Unit: "ms", Stats: st(5, 6)},
			{Tag: metrics.TagRequestLatency, Header: "Request Latency", Unit: "ms", Stats: st(ttft+75, ttft+90)},
			{Tag: metrics.TagPerUserThroughput, Header: "Output Token Throughput Per User", Unit: "tokens/sec/user", Stats: st(200, 220)},
			{Tag: metrics.TagOutputTokenThroughput, Header: "Output Token Throughput", Unit: "tokens/sec", Value: rps * 16},
			{Tag: metrics.TagRequestThroughput, Header: "Request Throughput", Unit: "requests/sec", Value: rps},
			{Tag: metrics.TagErrorRequestCount, Header: "Error Request Count", Unit: "requests", Value: 0},
		}},
		ControlHooks: []hooks.Call{
			{Hook: "reset_kv_cache", Origin: "http://127.0.0.1:8000", Path: "/reset_prefix_cache", Status: 200, Attempts: 1, OK: true, StartedAt: wallStart - 3e6},
			{Hook: "profiler_start", Phase: "profiling", Origin: "http://127.0.0.1:8000", Path: "/start_profile", Status: 200, Attempts: 1, OK: true, StartedAt: wallStart + 1e6},
			{Hook: "profiler_stop", Phase: "profiling", Origin: "http://127.0.0.1:8000", Path: "/stop_profile", Status: 200, Attempts: 1, OK: true, StartedAt: wallStart + int64(s.Records)*20e6 + 200e6},
		},
	}
	for k := range s.Records {
		sent := int64(k)*20e6 + 2e6
		first := sent + int64(ttft*1e6)
		last := first + 75e6
		r.Records = append(r.Records, metrics.Record{Index: k, Phase: "profiling", PhaseKind: plan.KindProfiling,
			ScheduledNs: sent, SentNs: sent, EndNs: last + 1e5, WallStartNs: wallStart, OutputTokens: 16,
			ResponseNs: metrics.StampsOf(first, last), Status: 200})
	}
	return r
}
