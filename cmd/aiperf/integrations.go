package main

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/livemetrics"
	"github.com/aiperf-go/aiperf/internal/mlflow"
	"github.com/aiperf-go/aiperf/internal/otelexport"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// integrations are where a run goes beyond its files, as it goes: an
// OpenTelemetry collector (--otel-url), the live Prometheus endpoint
// (--metrics-listen) and an MLflow run (--mlflow-tracking-uri).
type integrations struct {
	p      plan.Profile
	log    io.Writer
	otel   *otelexport.Exporter
	live   *livemetrics.Server
	ml     *mlflow.Run
	mlErr  error // the MLflow run could not be created
	ended  []result.Export
	redact *plan.Redactor // the profile's secrets and MLflow's credentials
}

// startIntegrations starts what the profile asks for, before any traffic:
// a --metrics-listen address that cannot be bound is a usage error (nothing
// is sent); an MLflow server that does not answer is a warning and the run
// goes on without it; a collector's silence is found while the run goes.
func startIntegrations(ctx context.Context, spec runner.Spec, id, dir string, log io.Writer) (*integrations, error) {
	p := spec.Profile
	in := &integrations{p: p, log: log,
		redact: plan.NewRedactor(slices.Concat(p.Secrets(), mlflow.EnvSecrets(), otelexport.EnvSecrets())...)}
	warn := func(msg string) { fmt.Fprintf(log, "warning: %s\n", in.redact.Redact(msg)) }
	labels := map[string]string{"benchmark_id": id}
	if spec.Name != "" {
		labels["name"] = spec.Name
	}
	if i := spec.Info; i.Sweep != "" {
		labels["sweep"], labels["cell"], labels["trial"] = i.Sweep, i.CellLabel, strconv.Itoa(i.Trial)
	}
	if p.MetricsListen != "" {
		ln, err := livemetrics.Listen(p.MetricsListen)
		if err != nil {
			return nil, fmt.Errorf("%w (nothing was sent)", err)
		}
		run := firstOf(spec.Name, spec.Info.Sweep, "profile")
		in.live = livemetrics.Serve(ln, livemetrics.Options{
			Labels:    livemetrics.Labels{Run: run, Cell: firstOf(spec.Info.CellLabel, "base"), Trial: strconv.Itoa(max(spec.Info.Trial, 1))},
			Streaming: p.Streams(),
			Info:      map[string]string{"benchmark_id": id, "model": strings.Join(p.Model, ","), "endpoint_type": p.EndpointType},
			Phases:    phaseNames(p.PhaseList()),
		})
		fmt.Fprintf(log, "live metrics: http://%s/metrics\n", in.live.Addr())
	}
	if p.OtelURL != "" {
		metricsOn, timingOn := p.StreamDomains()
		attrs, _ := p.ResourceAttributes() // checked
		servers := make([]otelexport.Server, 0, len(p.URL))
		for _, e := range p.ServerEndpoints() {
			servers = append(servers, otelexport.Server{Address: e.Host, Port: e.Port})
		}
		exp, err := otelexport.New(otelexport.Options{Endpoint: p.OtelMetricsURL(), Metrics: metricsOn, Timing: timingOn,
			Resource: attrs, Provider: p.GenAIProvider(), Operation: p.GenAIOperation(), Streaming: p.Streams(),
			Servers: servers, Labels: labels, Version: version, Warn: warn, Redact: in.redact.Redact})
		if err != nil {
			in.abort(ctx)
			return nil, err
		}
		in.otel = exp
	}
	if p.MLflowTrackingURI != "" {
		tags, _ := p.MLflowTags() // checked
		if tags == nil {
			tags = map[string]string{}
		}
		tags["gen_ai.provider.name"] = p.GenAIProvider()
		name := p.MLflowRunName
		if l := spec.Info.CellLabel; l != "" { // a trial: named by its cell, as AIPerf names sweep children
			name = fmt.Sprintf("%s (trial %d)", l, max(spec.Info.Trial, 1))
		}
		mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		in.ml, in.mlErr = mlflow.Start(mctx, mlflow.Options{TrackingURI: p.MLflowTrackingURI, Experiment: p.MLflowExperiment,
			RunName: name, ParentRunID: p.MLflowParentRunID, Tags: tags, ArtifactDir: dir, Globs: p.MLflowArtifactGlob,
			BenchmarkID: id, Streaming: p.Streams(), Redact: in.redact.Redact, Warn: warn})
		cancel()
		if in.mlErr != nil {
			warn(fmt.Sprintf("MLflow tracking server at %s: %v; the run goes on without MLflow", plan.RedactURL(p.MLflowTrackingURI), in.mlErr))
		} else {
			in.ml.StartLiveContext(ctx) // a Ctrl-C starts the grace of a send left unanswered
			fmt.Fprintf(log, "mlflow: run %s in experiment %s\n", in.ml.Info.RunID, p.MLflowExperimentName())
		}
	}
	return in, nil
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// exporters are the live exporters bench hands every record.
func (in *integrations) exporters() []bench.Exporter {
	var out []bench.Exporter
	if in.otel != nil {
		out = append(out, in.otel)
	}
	if in.live != nil {
		out = append(out, in.live)
	}
	if in.ml != nil {
		out = append(out, in.ml)
	}
	return out
}

// closeLive ends the OpenTelemetry export (its last export sent) and the
// live endpoint (after its final scrape, at most --metrics-linger).
func (in *integrations) closeLive(ctx context.Context) {
	if in.otel != nil {
		closeCtx, cancel := afterInterrupt(ctx, interruptedLinger)
		rep := in.otel.Close(closeCtx)
		cancel()
		in.ended = append(in.ended, result.Export{Kind: "otel", Target: rep.Endpoint, OK: rep.OK(), Detail: rep.Detail()})
		in.otel = nil
	}
	if in.live != nil {
		addr := in.live.Addr()
		linger := time.Duration(in.p.Linger() * float64(time.Second))
		wait, stop := ctx, "; Ctrl-C stops waiting"
		if ctx.Err() != nil {
			// After a Ctrl-C the final counts are still what the last scrape
			// is for, but briefly: a sweep's trial child must store its
			// result well inside its parent's grace (and a second Ctrl-C
			// exits at once).
			linger, wait, stop = min(linger, interruptedLinger), context.WithoutCancel(ctx), ""
		}
		if linger > 0 {
			fmt.Fprintf(in.log, "live metrics: waiting up to %s for a last scrape of http://%s/metrics (--metrics-linger%s)\n",
				linger, addr, stop)
		}
		scraped := in.live.Close(wait, linger) // a Ctrl-C during the wait ends it
		in.ended = append(in.ended, result.Export{Kind: "prometheus", Target: "http://" + addr + "/metrics", OK: scraped,
			Detail: map[bool]string{true: "final counts scraped", false: "final counts not scraped"}[scraped]})
		in.live = nil
	}
}

// finish ends every integration once the run's exports are written in dir:
// the MLflow run gets its summary and artifacts. It returns where the run
// went, for the store.
func (in *integrations) finish(ctx context.Context, run *result.Run) []result.Export {
	in.closeLive(ctx)
	if in.ml != nil {
		out := in.ml.Finish(ctx, run)
		e := result.Export{Kind: "mlflow", Target: plan.RedactURL(in.p.MLflowTrackingURI), Ref: out.RunID,
			Parent: in.ml.Parent, OK: out.Err == nil,
			Detail: fmt.Sprintf("%d summary metrics, %d artifacts", out.Metrics, len(out.Uploaded))}
		if out.Err != nil {
			e.Detail += ": " + in.redact.Redact(out.Err.Error())
			fmt.Fprintf(in.log, "warning: mlflow run %s: %s\n", out.RunID, e.Detail)
		}
		in.ended = append(in.ended, e)
		in.ml = nil
	} else if in.mlErr != nil {
		in.ended = append(in.ended, result.Export{Kind: "mlflow", Target: plan.RedactURL(in.p.MLflowTrackingURI),
			Detail: in.redact.Redact(in.mlErr.Error())})
	}
	return in.ended
}

// abort ends every integration of a run that failed before its load (a bad
// input): nothing lingers and the MLflow run is marked FAILED.
func (in *integrations) abort(ctx context.Context) {
	in.p.MetricsLinger = new(float64)
	in.closeLive(ctx)
	if in.ml != nil {
		_ = in.ml.End(ctx, "FAILED")
		in.ml = nil
	}
}

// IntegrationArgs are the integration options of aiperf sweep: each one
// given sets it on every cell (over the script's value).
type IntegrationArgs struct {
	OtelURL                string   `json:"otel_url" name:"otel-url" group:"Telemetry" placeholder:"URL" help:"Every trial streams to this OpenTelemetry collector (see aiperf profile --help)."`
	Stream                 []string `json:"stream" name:"stream" sep:"," group:"Telemetry" placeholder:"DOMAIN" help:"What --otel-url streams: metrics, timing or default."`
	OtelResourceAttributes []string `json:"otel_resource_attributes" name:"otel-resource-attributes" sep:"none" group:"Telemetry" placeholder:"K=V" help:"Extra OpenTelemetry resource attributes."`
	GenAIProvider          string   `json:"gen_ai_provider" name:"gen-ai-provider" group:"Telemetry" placeholder:"NAME" help:"The gen_ai.provider.name attribute."`
	MetricsListen          string   `json:"metrics_listen" name:"metrics-listen" group:"Telemetry" placeholder:"ADDR" help:"Each trial serves its live metrics at http://ADDR/metrics in turn (one trial at a time)."`
	MetricsLinger          *float64 `json:"metrics_linger" name:"metrics-linger" group:"Telemetry" placeholder:"SECONDS" help:"How long each trial waits for a last scrape (default 60)."`
	MLflowTrackingURI      string   `json:"mlflow_tracking_uri" name:"mlflow-tracking-uri" group:"MLflow" placeholder:"URL" help:"Log the sweep to this MLflow server: a parent run, and a child run per trial."`
	MLflowExperiment       string   `json:"mlflow_experiment" name:"mlflow-experiment" group:"MLflow" placeholder:"NAME" help:"MLflow experiment (default aiperf)."`
	MLflowRunName          string   `json:"mlflow_run_name" name:"mlflow-run-name" group:"MLflow" placeholder:"NAME" help:"The parent run's name (default the sweep's)."`
	MLflowTag              []string `json:"mlflow_tag" name:"mlflow-tag" sep:"none" group:"MLflow" placeholder:"K:V" help:"MLflow tag of every run (repeatable)."`
	MLflowArtifactGlob     []string `json:"mlflow_artifact_glob" name:"mlflow-artifact-glob" sep:"none" group:"MLflow" placeholder:"GLOB" help:"The trial files uploaded (default AIPerf's)."`
	MLflowParentRunID      string   `json:"mlflow_parent_run_id" name:"mlflow-parent-run-id" group:"MLflow" placeholder:"ID" help:"Create the sweep's parent run as a child of this run."`
}

// apply sets the options given on every cell of the sweeps and on the base
// of every search (so on each of its probes), and checks them.
func (a *IntegrationArgs) apply(sweeps []plan.Sweep, searches []plan.Search, parallel int) error {
	v := reflect.ValueOf(a).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		o, _ := plan.LookupOption(v.Type().Field(i).Tag.Get("json"))
		val := reflect.Indirect(f).Interface()
		for s := range sweeps {
			for c := range sweeps[s].Cells {
				if err := o.Set(&sweeps[s].Cells[c].Profile, val); err != nil {
					return err
				}
			}
		}
		for s := range searches {
			if err := o.Set(&searches[s].Base, val); err != nil {
				return err
			}
		}
	}
	for _, sw := range sweeps {
		for _, c := range sw.Cells {
			if c.Profile.MetricsListen != "" && parallel > 1 {
				return fmt.Errorf("--metrics-listen %s: each trial serves it in turn; --parallel %d would run several at once "+
					"(nothing was sent)", c.Profile.MetricsListen, parallel)
			}
		}
	}
	return nil
}

// sweepParent creates the MLflow parent run of a sweep whose cells log to
// MLflow, and returns the cells to run, each trial a child of it (nil
// when the cells do not log to MLflow, or the server does not answer: a
// warning, the trials then log as root runs).
func sweepParent(ctx context.Context, g *Globals, sw plan.Sweep) (*mlflow.Run, []plan.Cell) {
	var p *plan.Profile
	for i := range sw.Cells {
		if sw.Cells[i].Profile.MLflowTrackingURI != "" {
			p = &sw.Cells[i].Profile
			break
		}
	}
	if p == nil {
		return nil, nil
	}
	r := mlflowParent(ctx, g, *p, "sweep", sw.Name, map[string]string{"sweep.name": sw.Name,
		"sweep.cells": strconv.Itoa(len(sw.Cells)), "sweep.trials": strconv.Itoa(max(sw.Trials, 1))})
	if r == nil {
		return nil, nil
	}
	cells := slices.Clone(sw.Cells)
	for i := range cells {
		if cells[i].Profile.MLflowTrackingURI == p.MLflowTrackingURI {
			cells[i].Profile.MLflowParentRunID = r.Info.RunID
		}
	}
	return r, cells
}

// searchParent creates the MLflow parent run of a search that logs to
// MLflow and makes every probe's trial a child of it, as a sweep's are
// (nil when the search does not log to MLflow or the server does not
// answer: a warning, the trials then log as root runs).
func searchParent(ctx context.Context, g *Globals, s *plan.Search) *mlflow.Run {
	if s.Base.MLflowTrackingURI == "" {
		return nil
	}
	r := mlflowParent(ctx, g, s.Base, "search", s.Name, map[string]string{"search.name": s.Name,
		"search.planner": s.Config.Planner, "search.recipe": s.Config.Recipe, "search.trials": strconv.Itoa(max(s.Config.Trials.Min, 1))})
	if r != nil {
		s.Base.MLflowParentRunID = r.Info.RunID
	}
	return r
}

// mlflowParent starts the parent run of a sweep or search (what) named
// name, as p logs to MLflow; nil, with a warning, when it cannot.
func mlflowParent(ctx context.Context, g *Globals, p plan.Profile, what, name string, params map[string]string) *mlflow.Run {
	rd := plan.NewRedactor(append(p.Secrets(), mlflow.EnvSecrets()...)...)
	tags, _ := p.MLflowTags()
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := mlflow.StartParent(mctx, mlflow.Options{TrackingURI: p.MLflowTrackingURI, Experiment: p.MLflowExperiment,
		RunName: p.MLflowRunName, ParentRunID: p.MLflowParentRunID, Tags: tags, Redact: rd.Redact,
		Warn: func(s string) { fmt.Fprintf(g.Stderr, "warning: %s\n", rd.Redact(s)) }}, name, params)
	if err != nil {
		fmt.Fprintf(g.Stderr, "warning: mlflow parent run of %s %q: %s; the trials log as root runs\n", what, name,
			rd.Redact(err.Error()))
		if r == nil {
			return nil
		}
	}
	fmt.Fprintf(g.Stderr, "mlflow: %s %q is parent run %s\n", what, name, r.Info.RunID)
	return r
}

// endParent ends the MLflow parent run r (nil: none) with the status of
// its sweep or search.
func endParent(ctx context.Context, g *Globals, r *mlflow.Run, status string) {
	if r == nil {
		return
	}
	// After a Ctrl-C (ctx done), End waits 5 s at most.
	if err := r.End(ctx, map[string]string{result.StatusComplete: "FINISHED", result.StatusFailed: "FAILED",
		result.StatusInterrupted: "KILLED"}[status]); err != nil {
		fmt.Fprintf(g.Stderr, "warning: mlflow parent run %s: %v\n", r.Info.RunID, err)
	}
}

// interruptedLinger bounds the wait for a last scrape after a Ctrl-C.
const interruptedLinger = 5 * time.Second

// afterInterrupt is a context that outlives ctx by grace: the last export
// of an integration runs to its own bound, unless the run is interrupted,
// before it or while it runs, which leaves it grace more (a collector that
// hangs held a Ctrl-C for its whole 11 s bound).
func afterInterrupt(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var t *time.Timer
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		t = time.AfterFunc(grace, cancel)
		mu.Unlock()
	})
	return c, func() {
		stop()
		mu.Lock()
		if t != nil {
			t.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// phaseNames are the names of phases, in order.
func phaseNames(phases []plan.Phase) []string {
	names := make([]string, len(phases))
	for i, ph := range phases {
		names[i] = ph.Name
	}
	return names
}
