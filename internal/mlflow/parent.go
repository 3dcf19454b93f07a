package mlflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	if err := r.c.LogBatch(ctx, r.Info.RunID, nil, tagList(params), nil); err != nil {
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

// End sets the run's final status (FINISHED, FAILED or KILLED).
func (r *Run) End(ctx context.Context, status string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.c.http.Timeout)
	defer cancel()
	return r.c.UpdateRun(ctx, r.Info.RunID, status, time.Now())
}

// ErrNoExport says a directory holds no mlflow_export.json.
var ErrNoExport = errors.New("no " + ExportFile + ": the run was not logged to MLflow (--mlflow-tracking-uri)")

// UploadPlots uploads figure files (paths under dir) to the MLflow run
// that dir's mlflow_export.json records, as aiperf plot --mlflow-upload
// does; credentials come from MLflow's environment variables. It returns
// the run id and the artifact paths uploaded.
func UploadPlots(ctx context.Context, dir string, files []string, redact func(string) string) (string, []string, error) {
	b, err := os.ReadFile(filepath.Join(dir, ExportFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, fmt.Errorf("%s: %w", dir, ErrNoExport)
	}
	if err != nil {
		return "", nil, err
	}
	var f exportFile
	if err := json.Unmarshal(b, &f); err != nil || f.RunID == "" || f.TrackingURI == "" {
		return "", nil, fmt.Errorf("%s: %s does not name an MLflow run", dir, ExportFile)
	}
	uri := strings.Replace(f.TrackingURI, plan.Redacted+"@", "", 1)
	c, err := NewClient(uri, redact)
	if err != nil {
		return "", nil, err
	}
	info, _, _, _, err := c.GetRun(ctx, f.RunID)
	if err != nil {
		return f.RunID, nil, fmt.Errorf("find mlflow run %s: %w", f.RunID, err)
	}
	var done []string
	for _, p := range files {
		rel, err := filepath.Rel(dir, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = filepath.Base(p)
		}
		rel = filepath.ToSlash(rel)
		fh, err := os.Open(p)
		if err != nil {
			return f.RunID, done, err
		}
		err = c.UploadArtifact(ctx, info.ArtifactURI, ArtifactPath(rel), fh)
		fh.Close()
		if err != nil {
			return f.RunID, done, err
		}
		done = append(done, ArtifactPath(rel))
	}
	return f.RunID, done, nil
}
