package mlflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// Outcome is what a run's export to MLflow did.
type Outcome struct {
	RunID     string
	Uploaded  []string // artifact names, relative to the artifact directory
	Metrics   int      // summary metric keys logged (0 when their batch failed)
	LiveDrops int64    // live scalars dropped at a full queue
	// Err is the first failure. After an HTTP error the rest is still
	// tried; after a call the server did not answer (NoAnswer) nothing
	// more is sent, so that a server gone quiet costs one request timeout,
	// not one per artifact.
	Err error
}

// Finish ends the run: the live scalars still queued go, then the summary
// metrics, parameters and tags (each kind in its own batches, clipped to
// MLflow's limits, so that one rejected cannot lose the others), the
// artifact files and the final mlflow_export.json, and the run's status
// (FINISHED, FAILED or KILLED for an interrupted run) with its end time.
func (r *Run) Finish(ctx context.Context, run *result.Run) Outcome {
	e := &ending{out: Outcome{RunID: r.Info.RunID}}
	// An interrupted run still reports, briefly: interruptedFinish in all,
	// the last interruptedUpdate of it left to the status.
	sctx, cancel := ctx, context.CancelFunc(func() {})
	if ctx.Err() != nil {
		sctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), interruptedFinish-interruptedUpdate)
	}
	defer cancel()
	e.note(r.stopLive(ctx)) // a live send of the end left unanswered: nothing more is sent
	e.out.LiveDrops = r.dropped.Load()
	ms := SummaryMetrics(run)
	params, tags := r.params(run), r.tags(run)
	r.logSummary(sctx, e, ms, params, tags)
	files, err := collect(r.o.ArtifactDir, cmpSlice(r.o.Globs, DefaultArtifactGlobs))
	e.note(err)
	names := append(files, ExportFile)
	e.note(r.writeExportFile(exportFile{LiveStreaming: r.queue != nil, ReusedLiveRun: r.queue != nil,
		MetricKeys: slices.Sorted(maps.Keys(ms)), ParamKeys: slices.Sorted(maps.Keys(params)),
		TagKeys: slices.Sorted(maps.Keys(tags)), UploadedArtifacts: names}))
	r.uploadAll(sctx, e, names)
	if e.quiet {
		return e.out
	}
	status := "FINISHED"
	switch run.Status {
	case result.StatusInterrupted:
		status = "KILLED"
	case result.StatusFailed:
		status = "FAILED"
	}
	e.note(r.End(ctx, status)) // sent even after a Ctrl-C, then briefly
	return e.out
}

// ending is the outcome of a finish as it goes: its first failure, and
// whether a call went unanswered (quiet: nothing more is sent).
type ending struct {
	out   Outcome
	quiet bool
}

func (e *ending) note(err error) {
	if err != nil && e.out.Err == nil {
		e.out.Err = err
	}
	e.quiet = e.quiet || NoAnswer(err)
}

// logSummary logs the summary metrics, then the parameters, then the tags,
// each kind in requests of its own: a parameter the server refuses (one
// logged before with another value, say) loses neither the metrics nor the
// tags. Values over MLflow's limits are clipped, with one warning.
func (r *Run) logSummary(ctx context.Context, e *ending, ms map[string]float64, params, tags map[string]string) {
	pl, tl := tagList(params), tagList(tags)
	r.warnClipped(append(clipKVs(pl, "param", maxParamValue), clipKVs(tl, "tag", maxTagValue)...))
	if !e.quiet {
		if err := r.c.LogBatch(ctx, r.Info.RunID, metricList(ms, time.Now()), nil, nil); err != nil {
			e.note(err)
		} else {
			e.out.Metrics = len(ms)
		}
	}
	if !e.quiet {
		e.note(r.c.LogBatch(ctx, r.Info.RunID, nil, pl, nil))
	}
	if !e.quiet {
		e.note(r.c.LogBatch(ctx, r.Info.RunID, nil, nil, tl))
	}
}

// uploadAll uploads the artifact files in turn, until a call goes
// unanswered, ctx ends (a Ctrl-C) or the artifacts prove not proxied.
func (r *Run) uploadAll(ctx context.Context, e *ending, names []string) {
	for _, rel := range names {
		if e.quiet {
			return
		}
		if ctx.Err() != nil {
			e.note(ctx.Err())
			return
		}
		if err := r.upload(ctx, rel); err != nil {
			e.note(err)
			if errors.Is(err, ErrNotProxied) {
				return
			}
			continue
		}
		e.out.Uploaded = append(e.out.Uploaded, rel)
	}
}

// interruptedUpdate bounds the status update of a run interrupted (a
// Ctrl-C, before its finish or during it); interruptedFinish the whole
// finish of a run interrupted before it (its live batch, summary,
// artifacts and status).
const (
	interruptedUpdate = 5 * time.Second
	interruptedFinish = 30 * time.Second
)

// upload sends one artifact file, at AIPerf's place: plots under plots/,
// everything else under exports/.
func (r *Run) upload(ctx context.Context, rel string) error {
	f, err := os.Open(filepath.Join(r.o.ArtifactDir, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Errorf("upload %s: %w", rel, err)
	}
	defer f.Close()
	return r.c.UploadArtifact(ctx, r.Info.ArtifactURI, ArtifactPath(rel), f)
}

// plotSuffixes are the files AIPerf uploads under plots/.
var plotSuffixes = []string{".png", ".jpg", ".jpeg", ".svg", ".gif", ".webp", ".html"}

// ArtifactPath is where an artifact file (relative to the artifact
// directory) goes in the run: plots/<dir>/<name> for a figure,
// exports/<dir>/<name> otherwise, a leading plots/ or exports/ not doubled.
func ArtifactPath(rel string) string {
	base := "exports"
	if slices.Contains(plotSuffixes, strings.ToLower(path.Ext(rel))) {
		base = "plots"
	}
	rel = strings.TrimPrefix(rel, base+"/")
	return base + "/" + rel
}

// collect lists the files of dir matching any glob (relative slash paths,
// sorted); a leading **/ matches at any depth. mlflow_export.json is left
// out: it is written, then uploaded, last.
func collect(dir string, globs []string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if rel == ExportFile || strings.HasSuffix(rel, ".tmp") || strings.HasSuffix(rel, ".partial") {
			return nil
		}
		for _, g := range globs {
			if matchGlob(g, rel) {
				out = append(out, rel)
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the artifacts of %s: %w", dir, err)
	}
	slices.Sort(out)
	return out, nil
}

func matchGlob(g, rel string) bool {
	if rest, ok := strings.CutPrefix(g, "**/"); ok {
		ok, _ := path.Match(rest, path.Base(rel))
		return ok
	}
	ok, _ := path.Match(g, rel)
	return ok
}

func cmpSlice(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

// systemTags are the metrics AIPerf logs in MLflow's system/ namespace:
// transport diagnostics, server usage and token-count discrepancies,
// internal counts and GPU power.
var systemTags = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`http_req_blocked http_req_dns_lookup http_req_connecting http_req_sending
		http_req_waiting http_req_receiving http_req_duration http_req_connection_overhead http_req_total
		http_req_data_sent http_req_data_received http_req_chunks_sent http_req_chunks_received
		http_req_connection_reused credit_drop_latency inter_chunk_latency error_isl total_error_isl num_images
		video_peak_memory usage_prompt_tokens usage_completion_tokens usage_total_tokens usage_reasoning_tokens
		usage_prompt_cache_read_tokens usage_prompt_cache_write_tokens usage_prompt_cache_miss_tokens
		total_usage_prompt_tokens total_usage_completion_tokens total_usage_total_tokens total_usage_reasoning_tokens
		total_usage_prompt_cache_read_tokens overall_usage_prompt_cache_read_pct usage_prompt_tokens_diff_pct
		usage_completion_tokens_diff_pct usage_reasoning_tokens_diff_pct usage_discrepancy_count requested_osl
		osl_mismatch_diff_pct osl_mismatch_count nvidia_total_gpu_power nvidia_total_gpu_energy
		nvidia_average_gpu_power amd_total_gpu_power amd_total_gpu_energy amd_average_gpu_power`) {
		systemTags[t] = true
	}
}

// SummaryMetrics is the run's summary as AIPerf logs it to MLflow: each
// record metric's statistics as tag (the average) and tag.p50, tag.p99,
// tag.min, ... tag.count, tag.sum, each scalar metric as tag, the
// diagnostics under system/, and aiperf.completed_requests and
// aiperf.total_expected_requests.
func SummaryMetrics(run *result.Run) map[string]float64 {
	out := map[string]float64{}
	ok := 0
	for i := range run.Records {
		if run.Records[i].PhaseKind == plan.KindProfiling && run.Records[i].OK() {
			ok++
		}
	}
	out["aiperf.completed_requests"] = float64(ok)
	if n := run.Config.RequestCount; n != nil {
		out["aiperf.total_expected_requests"] = float64(*n)
	}
	for _, m := range run.Profiling.Metrics {
		key := m.Tag
		if systemTags[key] {
			key = "system/" + key
		}
		if m.Stats == nil {
			out[key] = m.Value
			continue
		}
		for field, v := range statFields(m.Stats) {
			if field == "avg" {
				out[key] = v
			} else {
				out[key+"."+field] = v
			}
		}
	}
	return out
}

func statFields(s *metrics.Stats) map[string]float64 {
	return map[string]float64{"avg": s.Avg, "p1": s.P1, "p5": s.P5, "p10": s.P10, "p25": s.P25, "p50": s.P50,
		"p75": s.P75, "p90": s.P90, "p95": s.P95, "p99": s.P99, "min": s.Min, "max": s.Max, "std": s.Std,
		"count": float64(s.Count), "sum": s.Sum}
}

func metricList(m map[string]float64, at time.Time) []Metric {
	out := make([]Metric, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, Metric{Key: k, Value: m[k], Timestamp: at.UnixMilli()})
	}
	return out
}

// params are AIPerf's run parameters, and a sweep trial's cell parameters
// as cell.<name>.
func (r *Run) params(run *result.Run) map[string]string {
	p := run.Config
	out := map[string]string{
		"endpoint.type":             p.EndpointType,
		"endpoint.models":           strings.Join(p.Model, ","),
		"endpoint.urls":             strings.Join(p.URL, ","), // already redacted
		"output.artifact_directory": r.o.ArtifactDir,
		"timing.mode":               run.Audit.Mode,
	}
	if p.Concurrency != nil {
		out["loadgen.concurrency"] = strconv.Itoa(*p.Concurrency)
	}
	if p.RequestRate != nil {
		out["loadgen.request_rate"] = strconv.FormatFloat(*p.RequestRate, 'g', -1, 64)
	}
	if p.RequestCount != nil {
		out["loadgen.request_count"] = strconv.Itoa(*p.RequestCount)
	}
	if p.BenchmarkDuration != nil {
		out["loadgen.benchmark_duration"] = strconv.FormatFloat(*p.BenchmarkDuration, 'g', -1, 64)
	}
	if run.CLICommand != "" {
		out["aiperf.cli_command"] = run.CLICommand // clipped as every value is
	}
	for _, prm := range run.Info.Params {
		b, _ := json.Marshal(prm.Value)
		v := string(b)
		if s, ok := prm.Value.(string); ok {
			v = s
		}
		out["cell."+prm.Name] = r.o.Redact(v)
	}
	return out
}

// tags are AIPerf's run tags, the sweep's place and the user's.
func (r *Run) tags(run *result.Run) map[string]string {
	out := map[string]string{
		"aiperf.version":       run.ToolVersion,
		"aiperf.was_cancelled": strconv.FormatBool(run.WasCancelled),
		"aiperf.status":        run.Status,
		"benchmark_id":         run.BenchmarkID,
	}
	if run.Info.Sweep != "" {
		out["aiperf.sweep"], out["aiperf.cell"] = run.Info.Sweep, run.Info.CellLabel
		out["aiperf.trial"] = strconv.Itoa(run.Info.Trial)
	}
	maps.Copy(out, r.o.Tags)
	return out
}
