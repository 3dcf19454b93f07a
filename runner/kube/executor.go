package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// Executor runs each trial as a Job in Cluster.Namespace.
type Executor struct {
	Cluster
	Config
	apiRetry time.Duration // how long API calls may fail in a row once a pod started
	logWait  time.Duration // how long a finished pod's log may take to read
	logMax   int           // the most of a pod's log read
	logKeep  int           // the most of it kept as the trial's LogFile
}

var _ runner.Executor = (*Executor)(nil)

// New checks cfg (naming the flag at fault) and returns the executor.
func New(c Cluster, cfg Config) (*Executor, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if c.Namespace == "" {
		return nil, errors.New("--namespace is required: the kubeconfig's context names none")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	return &Executor{Cluster: c, Config: cfg, apiRetry: defaultAPIRetry, logWait: defaultLogWait, logMax: MaxPodLog,
		logKeep: keptLog}, nil
}

// Launch runs one trial as a Job, waits for it, reads its result from the
// pod's log (kept, redacted, as the trial's LogFile in dir) and deletes the
// Job, its pod, ConfigMap and Secret, whatever happened, ctx cancelled
// included: those this trial created, never another's of the same name.
func (e *Executor) Launch(ctx context.Context, spec runner.Spec, dir string) (run *result.Run, err error) {
	remote, apiKey, err := runner.RemoteSpec(spec)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create trial dir: %w", err)
	}
	redact := spec.Profile.Redactor()
	name := jobName(spec)
	o, err := e.objects(name, remote, apiKey)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("trial job %s/%s", e.Namespace, name)
	m := &made{name: name}
	defer func() {
		if cerr := e.cleanup(ctx, m); cerr != nil {
			if run != nil {
				run.Audit.Warnings = append(run.Audit.Warnings, cerr.Error())
			} else {
				err = errors.Join(err, cerr)
			}
		}
		err = redact.Error(err)
	}()
	deadline := time.Now().Add(e.ScheduleTimeout) // for its pod to start, the Job's creation included
	if err := e.start(ctx, o, deadline, m); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	job, warnings, err := e.wait(ctx, name, deadline)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	run, log, err := e.collect(ctx, job, spec, dir, where)
	if err != nil {
		return nil, err
	}
	run = run.Redacted(redact)
	run.Audit.Warnings = append(slices.Clone(run.Audit.Warnings), warnings...)
	return e.ingest(run, log, dir, where)
}

// collect reads the result of the ended Job from its pod's log, which it
// keeps (redacted, without the frames' payload, its end only past
// keptLog) as the trial's LogFile in dir. A Job that failed is named with
// how its pod ended (evicted, OOMKilled, its exit code); a result that is
// not the trial's own is refused.
func (e *Executor) collect(ctx context.Context, job *batchv1.Job, spec runner.Spec, dir, where string) (*result.Run, []byte, error) {
	how := "succeeded"
	if failed, why := jobFailed(job); failed {
		how = "failed (" + why + e.podFailure(ctx, job.Name) + ")"
	}
	log, err := e.readLog(ctx, job.Name)
	logPath := filepath.Join(dir, runner.LogFile)
	if werr := keepLog(logPath, log, err, e.logKeep, spec.Profile.Redactor()); werr != nil {
		return nil, nil, fmt.Errorf("%s: %w", where, errors.Join(err, werr))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s; its result could not be read: %w", where, how, err)
	}
	run, err := runner.ReadFrame(bytes.NewReader(log))
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s without a result: %w%s", where, how, err, runner.LogTail(logPath))
	}
	if err := sameTrial(run.Info, spec.Info); err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", where, how, err)
	}
	return run, log, nil
}

// sameTrial refuses a result that names another trial than the one run.
func sameTrial(got, want result.TrialInfo) error {
	if got.SweepID != want.SweepID || got.CellID != want.CellID || got.Trial != want.Trial || got.SweepUUID != want.SweepUUID {
		return fmt.Errorf("the result frame is not this trial's: it names sweep %d (%q) cell %q trial %d, "+
			"the trial is sweep %d (%q) cell %q trial %d", got.SweepID, got.SweepUUID, got.CellID, got.Trial,
			want.SweepID, want.SweepUUID, want.CellID, want.Trial)
	}
	return nil
}

// ingest brings the trial's exports back from its log into dir and keeps
// its result there, as a local trial leaves them (a later --resume reads
// it, whatever executor runs then). An export that fails its checksum or
// is missing fails the trial: its result is not ingested.
func (e *Executor) ingest(run *result.Run, log []byte, dir, where string) (*result.Run, error) {
	warnings, err := runner.ReadExports(log, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: bring its exports back: %w", where, err)
	}
	run.Audit.Warnings = append(slices.Clone(run.Audit.Warnings), warnings...)
	if err := runner.WriteResult(filepath.Join(dir, runner.ResultFile), run); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return run, nil
}

// made is what one trial (or worker) created, by kind ("job",
// "configmap", "secret") → its UID ("" when a create's answer was lost, so
// that it may exist): what its cleanup deletes, and nothing else.
type made struct {
	name string
	mu   sync.Mutex
	uids map[string]types.UID
}

// note records the answer to creating an object of kind: created, or
// perhaps (no answer); an object refused (AlreadyExists: someone else's of
// that name, Forbidden, Invalid) is not this trial's.
func (m *made) note(kind string, obj metav1.Object, err error) {
	var status apierrors.APIStatus
	if err != nil && errors.As(err, &status) && status.Status().Code >= 400 && status.Status().Code < 500 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.uids == nil {
		m.uids = map[string]types.UID{}
	}
	m.uids[kind] = ""
	if err == nil && obj != nil {
		m.uids[kind] = obj.GetUID()
	}
}

// start creates the Job suspended, then its ConfigMap and Secret owned by
// it, then lets it run, each call bounded by deadline; m records what it
// created.
func (e *Executor) start(ctx context.Context, o trialObjects, deadline time.Time, m *made) error {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	within := func(err error) error {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("%w (not done within %s, --schedule-timeout)", err, e.ScheduleTimeout)
		}
		return err
	}
	jobs := e.Client.BatchV1().Jobs(e.Namespace)
	job, err := jobs.Create(ctx, o.job, metav1.CreateOptions{})
	m.note("job", job, err)
	if err != nil {
		return within(fmt.Errorf("create job: %w", err))
	}
	o.ownedBy(job)
	if o.spec != nil {
		cm, err := e.Client.CoreV1().ConfigMaps(e.Namespace).Create(ctx, o.spec, metav1.CreateOptions{})
		m.note("configmap", cm, err)
		if err != nil {
			return within(fmt.Errorf("create the trial spec's configmap: %w", err))
		}
	}
	if o.secret != nil {
		secret, err := e.Client.CoreV1().Secrets(e.Namespace).Create(ctx, o.secret, metav1.CreateOptions{})
		m.note("secret", secret, err)
		if err != nil {
			return within(fmt.Errorf("create the job's secret: %w", err))
		}
	}
	if _, err := jobs.Patch(ctx, job.Name, types.MergePatchType, []byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{}); err != nil {
		return within(fmt.Errorf("start job: %w", err))
	}
	return nil
}

// cleanup deletes what the trial created (its UID a precondition, when
// known); the Job's pod goes with it (propagation Background). It is not
// cut short by ctx: a cancelled sweep deletes its Jobs too.
func (e *Executor) cleanup(ctx context.Context, m *made) error {
	m.mu.Lock()
	uids := maps.Clone(m.uids)
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	bg := metav1.DeletePropagationBackground
	var errs []error
	for _, kind := range slices.Sorted(maps.Keys(uids)) {
		del := metav1.DeleteOptions{PropagationPolicy: &bg}
		if uid := uids[kind]; uid != "" {
			del.Preconditions = &metav1.Preconditions{UID: &uid}
		}
		var err error
		switch kind {
		case "job":
			err = e.Client.BatchV1().Jobs(e.Namespace).Delete(ctx, m.name, del)
		case "configmap":
			err = e.Client.CoreV1().ConfigMaps(e.Namespace).Delete(ctx, m.name, del)
		case "secret":
			err = e.Client.CoreV1().Secrets(e.Namespace).Delete(ctx, m.name, del)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s/%s: %w", kind, e.Namespace, m.name, err))
		}
	}
	return errors.Join(errs...)
}
