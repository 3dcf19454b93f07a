package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// ChildEnv is set (to "1") in the environment of every trial child: a trial
// child leaves the second Ctrl-C to its parent, which forwards the first.
const ChildEnv = "AIPERF_SWEEP_CHILD"

// Files a trial directory holds besides the profile exports.
const (
	// SpecFile is what the child runs, secrets included: mode 0600, removed
	// by the child as soon as it has read it (TakeSpec), by the parent when
	// the child is gone, and by the next run of the sweep should both have
	// been killed in between.
	SpecFile   = "trial_spec.json"
	ResultFile = "result.json" // the child's full result (redacted), read by the parent
	LogFile    = "aiperf.log"  // the child's stdout and stderr (redacted)
	// ProfilerMarkFile is the child's hooks.Mark while its server profiler
	// may be running: left behind by a child that died, it makes the parent
	// send the stop on its behalf.
	ProfilerMarkFile = "profiler_running.json"
	// ResetMarkFile is the child's mark of a KV-cache reset from before it
	// is sent until it was answered or waited for: left by a run
	// interrupted in between, it makes the trial's next run wait for that
	// reset, which its server may still run (bench.Options.ResetMark).
	ResetMarkFile = "reset_pending.json"
)

// Spec is everything a child `aiperf profile` needs to run one trial.
type Spec struct {
	Profile      plan.Profile     `json:"profile"`
	Info         result.TrialInfo `json:"info"`
	Name         string           `json:"name,omitempty"`
	ProfilerMark string           `json:"profiler_mark,omitempty"` // where the child's profiler leaves its mark
	ResetMark    string           `json:"reset_mark,omitempty"`    // where the child's KV-cache reset leaves its mark
	// CLICommand is the user's command line that launched the sweep,
	// redacted: the child exports it as run_info.cli_command.
	CLICommand string `json:"cli_command,omitempty"`
}

// TakeSpec reads a trial spec written by the parent and removes the file:
// it holds the trial's secrets, and the child keeps them in memory.
func TakeSpec(path string) (Spec, error) {
	s, err := readSpec(path)
	if err != nil {
		return s, err
	}
	if err := os.Remove(path); err != nil {
		return s, fmt.Errorf("remove trial spec: %w", err)
	}
	return s, nil
}

func readSpec(path string) (Spec, error) {
	var s Spec
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("read trial spec: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("decode trial spec %s: %w", path, err)
	}
	return s, nil
}

// removeStaleSpecs removes the spec files that a killed run left in the
// trial directories of trials: a parent killed outright (SIGKILL) cannot
// remove the spec of a child that never read it.
func removeStaleSpecs(trials []plan.Trial, trialDir func(plan.Trial) string) {
	for _, t := range trials {
		_ = os.Remove(filepath.Join(trialDir(t), SpecFile)) // usually there is none
	}
}

// ReadResult reads a child's result file.
func ReadResult(path string) (*result.Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read trial result: %w", err)
	}
	return decodeResult(b, path)
}

// WriteResult writes a trial's result file (the child's ResultFile, or
// the one a remote trial's parent keeps), atomically.
func WriteResult(path string, run *result.Run) error {
	b, err := json.Marshal(run)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write result file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write result file: %w", err)
	}
	return nil
}

// decodeResult decodes a child's result read from where ("frame": a
// remote child's result frame; else a result file's path). It must be what
// any run of `aiperf profile` leaves, whatever its status: its profile's
// model and URL (checked before any run), and when complete its profiling
// summary (the request count at least); else it is not a run's result.
func decodeResult(b []byte, where string) (*result.Run, error) {
	var r result.Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode trial result %s: %w", where, err)
	}
	switch r.Status {
	case result.StatusComplete, result.StatusFailed, result.StatusInterrupted:
	default:
		return nil, fmt.Errorf("decode trial result %s: invalid status %q", where, r.Status)
	}
	var lacks string
	switch {
	case len(r.Config.Model) == 0:
		lacks = "it names no model"
	case len(r.Config.URL) == 0:
		lacks = "it names no URL"
	case r.Status == result.StatusComplete && len(r.Profiling.Metrics) == 0:
		lacks = "it is complete without a profiling summary"
	default:
		return &r, nil
	}
	what := "the result file"
	if where == "frame" {
		what = "the result frame"
	}
	return nil, fmt.Errorf("decode trial result %s: %s is not a run's result: %s", where, what, lacks)
}

// Local is the local executor: it launches each trial as `<Binary> profile --spec-file ...`.
type Local struct {
	Binary string   // the aiperf executable (os.Executable() in production)
	Args   []string // extra arguments placed before "profile" (global flags)
	// Grace is how long an interrupted child gets to stop its profiler and
	// write its result before it is killed; 0 means a minute, or longer when
	// stopping every origin's profiler may take longer.
	Grace time.Duration
	// Workers, above 1, sends each trial's load from that many worker
	// processes of the child (profile --workers), with WorkerArgs (the
	// deadlines' flags) after it.
	Workers    int
	WorkerArgs []string
}

// grace is p.Grace, or the default for spec: a minute, stretched to cover a
// profiler start in flight (which the child lets finish) plus one profiler
// stop per origin, each at its full timeout.
func (p Local) grace(spec Spec) time.Duration {
	if p.Grace > 0 {
		return p.Grace
	}
	g := time.Minute
	if h := spec.Profile.ProfilerHook(); h.Enabled {
		g = max(g, time.Duration(len(spec.Profile.Origins())+1)*h.Timeout+10*time.Second)
	}
	return g
}

// Launch runs one trial in dir and returns the child's result. The child gets
// SIGINT when ctx is cancelled (and on Ctrl-C directly, as a member of the
// foreground process group).
//
// A child that dies (killed, crashed) while its server profiler may be
// running leaves its profiler mark behind: Launch then sends the stop on its
// behalf and returns a failed run recording those calls. Whatever the child
// left, the secrets of spec are redacted from its log, its result and the
// error.
func (p Local) Launch(ctx context.Context, spec Spec, dir string) (*result.Run, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create trial dir: %w", err)
	}
	if pid, running := TrialRunning(dir); running {
		return nil, fmt.Errorf("the trial process of an earlier run (pid %d) still runs in %s: this trial was not started "+
			"(wait for it to end, or stop it: kill %d)", pid, dir, pid)
	}
	specPath := filepath.Join(dir, SpecFile)
	resultPath := filepath.Join(dir, ResultFile)
	logPath := filepath.Join(dir, LogFile)
	spec.ProfilerMark, spec.ResetMark = filepath.Join(dir, ProfilerMarkFile), filepath.Join(dir, ResetMarkFile)
	// A previous run's mark: its process died (a second Ctrl-C, a crash)
	// with its profiler possibly running. Stop it before this run starts
	// its own, and record the stop on this run.
	earlier, earlierErr := stopEarlierProfiler(ctx, spec, dir)
	if errors.Is(earlierErr, errStillRunning) || (earlierErr != nil && ctx.Err() != nil) {
		return nil, earlierErr
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode trial spec: %w", err)
	}
	if err := os.WriteFile(specPath, b, 0o600); err != nil {
		return nil, fmt.Errorf("write trial spec: %w", err)
	}
	defer os.Remove(specPath) // the child removes it first, unless it never got that far
	os.Remove(resultPath)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create trial log: %w", err)
	}
	defer logf.Close()

	args := append(append([]string{}, p.Args...), "profile", "--spec-file", specPath,
		"--artifact-dir", dir, "--result-file", resultPath, "--ui", "none", "--no-store", "-v")
	if p.Workers > 1 {
		args = append(append(args, "--workers", fmt.Sprint(p.Workers)), p.WorkerArgs...)
	}
	alive, lives, err := os.Pipe() // the child reads EOF once this process is gone (ExitWithParent)
	if err != nil {
		return nil, fmt.Errorf("start trial process: %w", err)
	}
	defer lives.Close()
	cmd := exec.CommandContext(ctx, p.Binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), ChildEnv+"=1", ParentFDEnv+"=3")
	cmd.ExtraFiles = []*os.File{alive}
	cmd.Cancel = func() error {
		_, _ = lives.Write([]byte{'i'}) // interrupted by its parent: should the parent die now, the child exits at once
		return cmd.Process.Signal(os.Interrupt)
	}
	cmd.SysProcAttr = orphanSignal()
	cmd.WaitDelay = p.grace(spec)
	runErr := runRecorded(cmd, filepath.Join(dir, PIDFile), alive)

	redact := spec.Profile.Redactor()
	redactFile(logPath, redact) // a crash dump is written past the child's own redaction
	stops, stopErr := stopOrphanedProfiler(ctx, spec)
	run, launchErr := ReadResult(resultPath)
	if launchErr != nil {
		switch {
		case runErr == nil && errors.Is(launchErr, fs.ErrNotExist):
			runErr = errors.New("exited without writing a result")
		case runErr == nil:
			runErr = launchErr // a result, but not a run's (decodeResult says why)
		}
		tail := LogTail(logPath)
		if ee := (*exec.ExitError)(nil); errors.As(runErr, &ee) && ee.ExitCode() == -1 {
			tail = "" // killed by a signal: its log's last line is what it was doing, not why it ended
		}
		launchErr = redact.Error(fmt.Errorf("trial process: %w%s", runErr, tail))
		if len(stops) == 0 && len(earlier) == 0 {
			return nil, launchErr
		}
		run = failedRun(spec, launchErr) // to record the stops
	}
	run = run.Redacted(redact)
	if len(earlier) > 0 { // before this run's own calls, as they were sent
		run.ControlHooks = append(slices.Clone(earlier), run.ControlHooks...)
		run.Audit.Warnings = append(slices.Clone(run.Audit.Warnings), stopWarning(earlierErr, earlierNote, redact))
	}
	if len(stops) > 0 {
		run.ControlHooks = append(slices.Clone(run.ControlHooks), stops...)
		run.Audit.Warnings = append(slices.Clone(run.Audit.Warnings), stopWarning(stopErr, orphanNote, redact))
	}
	return run, launchErr
}

// stopWarning is the run's warning on profiler stops the runner sent on a
// trial process's behalf (note says why), with their failure if any.
func stopWarning(err error, note string, redact *plan.Redactor) string {
	if err != nil {
		return redact.Redact(err.Error()) + " (" + note + ")"
	}
	return "server profiler " + note
}

// earlierNote is the warning on every profiler stop the runner sends, before
// a trial runs again, on behalf of an earlier run of it whose process died
// with its profiler possibly running (a second Ctrl-C during its profiler
// start, say).
const earlierNote = "stopped by the sweep runner before the trial ran again: an earlier run's trial process died " +
	"with its profiler possibly running"

// errStillRunning refuses a trial whose earlier run's process still runs.
var errStillRunning = errors.New("the trial process of an earlier run still runs")

// stopEarlierProfiler stops the profiler that an earlier run of the trial in
// dir left marked (its process is gone; one still running is refused,
// wrapping errStillRunning), with the trial's headers, to the origins both
// the mark and the trial name, and removes the mark. A start the dead
// process had on its way may reach the server until its timeout after it
// was sent: the stop waits until then, lest it arrive first (a Ctrl-C during
// that wait leaves the mark for the next run). Without a mark it does
// nothing.
func stopEarlierProfiler(ctx context.Context, spec Spec, dir string) ([]hooks.Call, error) {
	m, err := hooks.ReadMark(spec.ProfilerMark)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err == nil && m.PID > 0 && m.PID != os.Getpid() && runsTrial(m.PID, dir) {
		return nil, fmt.Errorf("%w (pid %d) in %s with its server profiler running: this trial was not started "+
			"(wait for it to end, or stop it: kill -INT %d)", errStillRunning, m.PID, dir, m.PID)
	}
	h := spec.Profile.ProfilerHook()
	if err == nil {
		if h.StopPath == "" {
			h.StopPath = m.StopPath
		}
		if h.Timeout <= 0 {
			h.Timeout = time.Duration(m.TimeoutSeconds * float64(time.Second))
		}
		if d := time.Until(m.StartDeadline()); d > 0 {
			if !sleep(ctx, min(d, m.StartWindow())) {
				return nil, fmt.Errorf("interrupted while waiting to stop the server profiler an earlier run left running: %w",
					context.Cause(ctx))
			}
		}
	}
	c := hooks.New(hooks.Headers(spec.Profile)).WithURLCredentials(spec.Profile.URL)
	return c.StopMarked(context.WithoutCancel(ctx), spec.ProfilerMark, spec.Profile.Origins(), h, earlierNote)
}

// orphanNote is the warning on every profiler stop the runner sends on behalf
// of a trial process that died.
const orphanNote = "stopped by the sweep runner after the trial process died"

// stopOrphanedProfiler sends the profiler stop of a child that died with its
// profiler possibly running (its mark is still there), with the trial's
// headers, to the trial's origins only. Stopping is not cut short by ctx:
// an interrupted sweep must not leave a profiler running either.
func stopOrphanedProfiler(ctx context.Context, spec Spec) ([]hooks.Call, error) {
	if _, err := os.Stat(spec.ProfilerMark); err != nil {
		return nil, nil
	}
	c := hooks.New(hooks.Headers(spec.Profile)).WithURLCredentials(spec.Profile.URL)
	return c.StopMarked(context.WithoutCancel(ctx), spec.ProfilerMark, spec.Profile.Origins(),
		spec.Profile.ProfilerHook(), orphanNote)
}

// redactFile rewrites path with rd's secrets redacted, if it holds any.
func redactFile(path string, rd *plan.Redactor) {
	b, err := os.ReadFile(path)
	if err != nil || rd.Empty() {
		return
	}
	if red := rd.Redact(string(b)); red != string(b) {
		_ = os.WriteFile(path, []byte(red), 0o644)
	}
}

// LogTail returns ": <last line of the log at path>" to explain a crashed
// child ("" when there is none).
func LogTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return ": " + l
	}
	return ""
}

// runRecorded runs cmd with its pid in pidPath while it runs (TrialRunning),
// closing this process's copy of childEnd once the child holds its own.
func runRecorded(cmd *exec.Cmd, pidPath string, childEnd *os.File) error {
	err := cmd.Start()
	childEnd.Close()
	if err != nil {
		return err
	}
	// Written whole or not at all (a reader never sees it empty), best
	// effort: it only guards a resume.
	if tmp := pidPath + ".tmp"; os.WriteFile(tmp, []byte(fmt.Sprintln(cmd.Process.Pid)), 0o644) == nil {
		_ = os.Rename(tmp, pidPath)
	}
	defer os.Remove(pidPath)
	return cmd.Wait()
}
