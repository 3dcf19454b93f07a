package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/mlflow"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/plot"
)

// plot --mlflow-upload, as AIPerf's: the PNG figures go to an existing
// MLflow run as artifacts under plots/. For an artifact directory the run
// is --mlflow-run-id, else the run_id of the directory's
// mlflow_export.json (ours: else the parent run, or the one run, that the
// exports found under it name); the server --mlflow-tracking-uri, else the
// export's tracking_uri, else $MLFLOW_TRACKING_URI. Stored runs go to the
// run the store recorded: one run drawn (one trial too) to its own, several
// or a sweep to their parent run. The tracking URI is never printed: it may
// hold credentials.

// mlflowTarget is the MLflow run the figures go to.
type mlflowTarget struct {
	uri     string // as given or recorded (an export's has its credentials redacted)
	uriFrom string // where uri came from, for messages: a flag, a variable, a file or the store
	runID   string
}

// mlflowExport is what plot reads of an mlflow_export.json (AIPerf's
// fields, and ours).
type mlflowExport struct {
	TrackingURI string  `json:"tracking_uri"`
	RunID       string  `json:"run_id"`
	ParentRunID *string `json:"parent_run_id"`
}

// Bounds of the look for exports under a directory that has none.
const (
	maxExportFile  = 1 << 20
	maxExportDepth = 8
	maxExportWalk  = 100_000
)

// validateMLflow refuses the --mlflow-* combinations that cannot work,
// before anything is read.
func (c *PlotCmd) validateMLflow() error {
	if c.MLflowUpload && c.Dashboard {
		return errors.New("--mlflow-upload and --dashboard do not go together (as in AIPerf): " +
			"the dashboard writes no figures to upload; drop one")
	}
	if c.MLflowUpload && !slices.Contains(c.Format, "png") {
		return errors.New("--mlflow-upload uploads the PNG figures (as AIPerf's): add png to --format")
	}
	if c.MLflowURI != "" {
		if err := checkTrackingURI(c.MLflowURI); err != nil {
			return fmt.Errorf("--mlflow-tracking-uri %s: %w", plan.RedactURL(c.MLflowURI), err)
		}
	}
	return nil
}

// checkTrackingURI accepts the http(s) URL of a tracking server (an
// export's, its credentials redacted, too).
func checkTrackingURI(raw string) error {
	u, err := url.Parse(strings.Replace(strings.TrimSpace(raw), plan.Redacted+"@", "", 1))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return errors.New("want the http(s) URL of an MLflow tracking server (aiperf uploads through its REST API; " +
			"a file: store is not supported), e.g. http://127.0.0.1:5000")
	}
	return nil
}

// noteMLflowFlags says when --mlflow-tracking-uri or --mlflow-run-id is
// given without --mlflow-upload (AIPerf ignores them silently).
func (c *PlotCmd) noteMLflowFlags(w io.Writer) {
	if !c.MLflowUpload && (c.MLflowURI != "" || c.MLflowRunID != "") {
		fmt.Fprintln(w, "note: --mlflow-tracking-uri and --mlflow-run-id are read with --mlflow-upload only: ignored")
	}
}

// dirTarget is the MLflow run of the artifact directory an upload of
// artifact directories goes to (nil for stored runs or no upload),
// resolved before anything is drawn: every problem exits 2.
func (c *PlotCmd) dirTarget() (*mlflowTarget, error) {
	dirs, refs := c.split()
	if !c.MLflowUpload || len(refs) > 0 || len(c.Sweep) > 0 {
		return nil, nil
	}
	dirs = orDefaultDirs(dirs)
	if len(dirs) != 1 {
		return nil, usageErr(fmt.Errorf("--mlflow-upload takes exactly one artifact directory, the run whose "+
			"mlflow_export.json names the MLflow run (as AIPerf), got %d: plot one run or one sweep's directory", len(dirs)))
	}
	if st, err := os.Stat(dirs[0]); err != nil || !st.IsDir() {
		return nil, nil // reading the runs says what is wrong with it
	}
	exp, from, err := findExport(dirs[0])
	if err != nil {
		return nil, usageErr(err)
	}
	t := mlflowTarget{runID: firstOf(c.MLflowRunID, exp.RunID)}
	t.uri, t.uriFrom = trackingURI(c.MLflowURI, exp.TrackingURI, from)
	switch {
	case t.runID == "" && from == "":
		return nil, usageErr(fmt.Errorf("--mlflow-upload: %s has no %s (its run was not logged with --mlflow-tracking-uri): "+
			"give the MLflow run with --mlflow-run-id", dirs[0], mlflow.ExportFile))
	case t.runID == "":
		return nil, usageErr(fmt.Errorf("--mlflow-upload: no MLflow run is named in %s (its run_id is empty or missing): "+
			"give the MLflow run with --mlflow-run-id", from))
	case t.uri == "" && from == "":
		return nil, usageErr(fmt.Errorf("--mlflow-upload: no MLflow tracking server (%s has no %s): "+
			"give --mlflow-tracking-uri or set $MLFLOW_TRACKING_URI", dirs[0], mlflow.ExportFile))
	case t.uri == "":
		return nil, usageErr(fmt.Errorf("--mlflow-upload: no MLflow tracking server (%s names none): "+
			"give --mlflow-tracking-uri or set $MLFLOW_TRACKING_URI", from))
	}
	if err := checkTrackingURI(t.uri); err != nil {
		return nil, usageErr(fmt.Errorf("--mlflow-upload: the tracking uri %s (from %s): %w",
			plan.RedactURL(t.uri), t.uriFrom, err))
	}
	return &t, nil
}

// trackingURI is flag, else the recorded URI (recordedIn names where),
// else $MLFLOW_TRACKING_URI, with where it came from. A recorded URI
// (ours has its credentials redacted) gives way to $MLFLOW_TRACKING_URI
// naming the same server, which may carry them.
func trackingURI(flag, recorded, recordedIn string) (uri, from string) {
	const envName = "$MLFLOW_TRACKING_URI"
	env := strings.TrimSpace(os.Getenv("MLFLOW_TRACKING_URI"))
	switch {
	case flag != "":
		return flag, "--mlflow-tracking-uri"
	case recorded == "":
		return env, envName
	case env != "" && serverOf(env) == serverOf(recorded):
		return env, envName
	}
	return recorded, recordedIn
}

// serverOf is a URL without its userinfo (redacted or not) and trailing
// slash.
func serverOf(raw string) string {
	u, err := url.Parse(strings.Replace(strings.TrimSpace(raw), plan.Redacted+"@", "", 1))
	if err != nil {
		return raw
	}
	u.User = nil
	return strings.TrimRight(u.String(), "/")
}

// findExport reads dir's mlflow_export.json; when dir has none, the
// exports under it (a sweep's trials), which must name one MLflow run:
// the parent run they share, or the single run. from names the file(s).
func findExport(dir string) (exp mlflowExport, from string, err error) {
	own := filepath.Join(dir, mlflow.ExportFile)
	switch exp, err = readExport(own); {
	case err == nil:
		return exp, own, nil
	case !errors.Is(err, fs.ErrNotExist):
		return exp, "", err
	}
	files, err := exportsUnder(dir)
	if err != nil || len(files) == 0 {
		return mlflowExport{}, "", err
	}
	targets := map[string]mlflowExport{}
	for _, f := range files {
		e, err := readExport(f)
		if err != nil {
			return mlflowExport{}, "", err
		}
		if e.ParentRunID != nil && *e.ParentRunID != "" {
			e.RunID = *e.ParentRunID
		}
		if _, seen := targets[e.RunID]; !seen && e.RunID != "" {
			targets[e.RunID] = e
		}
	}
	if len(targets) > 1 {
		return mlflowExport{}, "", fmt.Errorf("--mlflow-upload: the %d %s files under %s name %d MLflow runs with no "+
			"common parent run: give --mlflow-run-id, or plot one run's directory", len(files), mlflow.ExportFile, dir, len(targets))
	}
	for _, e := range targets {
		exp = e
	}
	return exp, fmt.Sprintf("the %d %s files under %s", len(files), mlflow.ExportFile, dir), nil
}

// readExport decodes an mlflow_export.json (fs.ErrNotExist when absent).
// What is not a regular file is refused unopened (a FIFO's open would
// wait for a writer).
func readExport(path string) (mlflowExport, error) {
	var e mlflowExport
	b, err := inputfile.ReadFileMax(path, maxExportFile)
	var (
		nr inputfile.NotRegularError
		tl *inputfile.TooLargeError
		pe *fs.PathError
	)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		return e, err
	case errors.As(err, &nr):
		return e, fmt.Errorf("--mlflow-upload: %s is %s, not an MLflow export record: give the MLflow run with "+
			"--mlflow-run-id and the server with --mlflow-tracking-uri", path, nr.Kind())
	case errors.As(err, &tl):
		return e, fmt.Errorf("%s is over %d bytes: not an MLflow export record; give --mlflow-run-id", path, maxExportFile)
	case errors.As(err, &pe):
		return e, fmt.Errorf("read %s: %w", path, pe.Err) // the path named once
	default:
		return e, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("%s is not an MLflow export record (a JSON object): %w; give --mlflow-run-id and --mlflow-tracking-uri",
			path, err)
	}
	return e, nil
}

// exportsUnder lists the mlflow_export.json files below dir (bounded
// depth and walk; symbolic links are not followed).
func exportsUnder(dir string) ([]string, error) {
	var out []string
	seen := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable corner holds no export we can use
		}
		if seen++; seen > maxExportWalk {
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && strings.Count(filepath.ToSlash(rel), "/") >= maxExportDepth {
			return fs.SkipDir
		}
		if !d.IsDir() && d.Name() == mlflow.ExportFile {
			out = append(out, p)
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// storedTarget is the MLflow run the drawn stored runs were logged to, as
// the store recorded it (the parent run their trials share, else their
// one run); --mlflow-run-id and --mlflow-tracking-uri override it.
func (c *PlotCmd) storedTarget(ctx context.Context, g *Globals) (*mlflowTarget, error) {
	db, err := openStoreToRead(ctx, g.Store)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	_, refs := c.split()
	d, err := plot.Load(ctx, db, plot.Selection{Sweeps: c.Sweep, Refs: refs}, c.ConfidenceLevel)
	if err != nil {
		return nil, refErr(cellHintIn(ctx, db, refs, err))
	}
	// One run drawn (one trial, not a sweep) goes to its own MLflow run, as
	// its artifact directory's export names it; several, or a sweep, to the
	// parent run they share.
	own := len(d.Runs) == 1 && len(d.Sweeps) == 0
	uris := map[string]string{} // run id → tracking uri
	for _, r := range d.Runs {
		for _, e := range r.Exports {
			if e.Kind == "mlflow" && e.Ref != "" {
				id := firstOf(e.Parent, e.Ref)
				if own {
					id = e.Ref
				}
				uris[id] = e.Target
			}
		}
	}
	if c.MLflowRunID == "" && len(uris) != 1 {
		what := "none of the drawn runs was logged to MLflow (--mlflow-tracking-uri)"
		if len(uris) > 1 {
			what = fmt.Sprintf("the drawn runs were logged to %d MLflow runs with no common parent", len(uris))
		}
		return nil, usageErr(fmt.Errorf("--mlflow-upload: %s: give --mlflow-run-id, or draw one run or one sweep "+
			"(the figures are written)", what))
	}
	t := &mlflowTarget{runID: c.MLflowRunID}
	var recorded string
	for id, uri := range uris {
		t.runID, recorded = firstOf(c.MLflowRunID, id), uri
	}
	if t.uri, t.uriFrom = trackingURI(c.MLflowURI, recorded, "the store"); t.uri == "" {
		return nil, usageErr(errors.New("--mlflow-upload: no MLflow tracking server: give --mlflow-tracking-uri or " +
			"set $MLFLOW_TRACKING_URI (the figures are written)"))
	}
	return t, nil
}

// sendFigures uploads the PNGs among the written figures (paths under
// root) to t's run, as AIPerf uploads its PNG plots.
func sendFigures(ctx context.Context, g *Globals, t mlflowTarget, root string, paths []string) error {
	pngs := slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return !strings.HasSuffix(p, ".png") })
	// The client's messages are redacted of these (and of any URL's userinfo).
	rd := plan.NewRedactor(append(plan.Profile{MLflowTrackingURI: t.uri}.Secrets(), mlflow.EnvSecrets()...)...)
	up, err := mlflow.UploadFigures(ctx, t.uri, t.runID, root, pngs, rd.Redact)
	if err != nil {
		hint := ""
		var ae *mlflow.APIError
		if errors.As(err, &ae) && (ae.Status == 401 || ae.Status == 403) {
			hint = " (" + credentialsHint(t) + ")"
		}
		return fmt.Errorf("upload the figures to mlflow run %s (%d of %d uploaded; the figures are written)%s: %w",
			t.runID, len(up), len(pngs), hint, err)
	}
	fmt.Fprintf(g.Stdout, "uploaded %d figures to mlflow run %s\n", len(up), t.runID)
	return nil
}

// credentialsHint says, for a server that refused the upload, which
// credentials were sent (as the client picks them: the URI's, else
// MLflow's variables') and what to do; never their values.
func credentialsHint(t mlflowTarget) string {
	const give = "give the server's credentials in --mlflow-tracking-uri as user:password@, or in " +
		"$MLFLOW_TRACKING_TOKEN or $MLFLOW_TRACKING_USERNAME/PASSWORD"
	u, err := url.Parse(strings.Replace(strings.TrimSpace(t.uri), plan.Redacted+"@", "", 1)) // as the client reads it
	switch {
	case err == nil && u.User != nil:
		return "the server refused the user and password in " + t.uriFrom + ": check them, and that the user may write to the run"
	case os.Getenv("MLFLOW_TRACKING_TOKEN") != "":
		return "the server refused the token in $MLFLOW_TRACKING_TOKEN: check it, and that it may write to the run"
	case os.Getenv("MLFLOW_TRACKING_USERNAME") != "":
		return "the server refused the user and password in $MLFLOW_TRACKING_USERNAME/PASSWORD: check them, " +
			"and that the user may write to the run"
	case t.uriFrom != "--mlflow-tracking-uri" && t.uriFrom != "$MLFLOW_TRACKING_URI":
		return give + ": the tracking uri recorded in " + t.uriFrom + " keeps none"
	}
	return give + ": none were sent"
}
