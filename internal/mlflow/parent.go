package mlflow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// StartParent creates a sweep's parent run (named after the sweep, unless
// RunName says otherwise), with the sweep's parameters; every trial's run
// is then created as its child.
func StartParent(ctx context.Context, o Options, sweep string, params map[string]string) (*Run, error) {
	o.RunName = cmpOr(o.RunName, sweep)
	o.BenchmarkID = cmpOr(o.BenchmarkID, "sweep")
	o.Tags = withTag(o.Tags, "aiperf.sweep", sweep)
	r, err := Start(ctx, o)
	if err != nil {
		return nil, err
	}
	pl := tagList(params)
	r.warnClipped(clipKVs(pl, "param", maxParamValue))
	if err := r.c.LogBatch(ctx, r.Info.RunID, nil, pl, nil); err != nil {
		return r, err
	}
	return r, nil
}

func withTag(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for kk, vv := range m {
		out[kk] = vv
	}
	return out
}

// End sets the run's final status (FINISHED, FAILED or KILLED) within the
// request timeout; ctx's end (a Ctrl-C), before the call or while it waits,
// leaves it interruptedUpdate more at most.
func (r *Run) End(ctx context.Context, status string) error {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.c.http.Timeout)
	defer cancel()
	var cut atomic.Bool
	defer context.AfterFunc(ctx, func() {
		time.AfterFunc(interruptedUpdate, func() { cut.Store(true); cancel() })
	})()
	err := r.c.UpdateRun(uctx, r.Info.RunID, status, time.Now())
	if err != nil && cut.Load() {
		return &NoAnswerError{fmt.Sprintf("mlflow POST /api/2.0/mlflow/runs/update (%s): no answer %s after the run's interrupt",
			status, interruptedUpdate)}
	}
	return err
}

// UploadFigures uploads figure files (paths under root) to an MLflow run,
// under plots/ at their path relative to root, as aiperf plot
// --mlflow-upload does. trackingURI may be one the store kept, its
// credentials redacted: they then come from MLflow's environment
// variables. It returns the artifact paths uploaded.
func UploadFigures(ctx context.Context, trackingURI, runID, root string, files []string, redact func(string) string) ([]string, error) {
	c, err := NewClient(strings.Replace(trackingURI, plan.Redacted+"@", "", 1), redact)
	if err != nil {
		return nil, err
	}
	info, _, _, _, err := c.GetRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("find mlflow run %s: %w", runID, err)
	}
	var done []string
	for _, p := range files {
		rel, err := filepath.Rel(root, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = filepath.Base(p)
		}
		dest := "plots/" + strings.TrimPrefix(filepath.ToSlash(rel), "plots/")
		fh, err := os.Open(p)
		if err != nil {
			return done, err
		}
		err = c.UploadArtifact(ctx, info.ArtifactURI, dest, fh)
		fh.Close()
		if err != nil {
			return done, err
		}
		done = append(done, dest)
	}
	return done, nil
}
