package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// Files a trial directory holds besides the profile exports.
const (
	SpecFile   = "trial_spec.json" // what the child ran (secrets included: mode 0600, removed after the trial)
	ResultFile = "result.json"     // the child's full result (redacted), read by the parent
	LogFile    = "aiperf.log"      // the child's stdout and stderr
)

// Spec is everything a child `aiperf profile` needs to run one trial.
type Spec struct {
	Profile plan.Profile     `json:"profile"`
	Info    result.TrialInfo `json:"info"`
	Name    string           `json:"name,omitempty"`
}

// ReadSpec reads a trial spec written by the parent.
func ReadSpec(path string) (Spec, error) {
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

// ReadResult reads a child's result file.
func ReadResult(path string) (*result.Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read trial result: %w", err)
	}
	var r result.Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode trial result %s: %w", path, err)
	}
	switch r.Status {
	case result.StatusComplete, result.StatusFailed, result.StatusInterrupted:
		return &r, nil
	}
	return nil, fmt.Errorf("decode trial result %s: invalid status %q", path, r.Status)
}

// Process launches each trial as `<Binary> profile --spec-file ...`.
type Process struct {
	Binary string   // the aiperf executable (os.Executable() in production)
	Args   []string // extra arguments placed before "profile" (global flags)
	// Grace is how long an interrupted child gets to stop its profiler and
	// write its result before it is killed; 0 means a minute, or longer when
	// stopping every origin's profiler may take longer.
	Grace time.Duration
}

// grace is p.Grace, or the default for spec: a minute, stretched to cover
// one profiler stop per origin at its full timeout.
func (p Process) grace(spec Spec) time.Duration {
	if p.Grace > 0 {
		return p.Grace
	}
	g := time.Minute
	if h := spec.Profile.ProfilerHook(); h.Enabled {
		g = max(g, time.Duration(len(spec.Profile.Origins()))*h.Timeout+10*time.Second)
	}
	return g
}

// Launch runs one trial in dir and returns the child's result. The child gets
// SIGINT when ctx is cancelled (and on Ctrl-C directly, as a member of the
// foreground process group).
func (p Process) Launch(ctx context.Context, spec Spec, dir string) (*result.Run, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create trial dir: %w", err)
	}
	specPath := filepath.Join(dir, SpecFile)
	resultPath := filepath.Join(dir, ResultFile)
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode trial spec: %w", err)
	}
	if err := os.WriteFile(specPath, b, 0o600); err != nil {
		return nil, fmt.Errorf("write trial spec: %w", err)
	}
	defer os.Remove(specPath)
	os.Remove(resultPath)
	logf, err := os.Create(filepath.Join(dir, LogFile))
	if err != nil {
		return nil, fmt.Errorf("create trial log: %w", err)
	}
	defer logf.Close()

	args := append(append([]string{}, p.Args...), "profile", "--spec-file", specPath,
		"--artifact-dir", dir, "--result-file", resultPath, "--ui", "none", "--no-store", "-v")
	cmd := exec.CommandContext(ctx, p.Binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.SysProcAttr = orphanSignal()
	cmd.WaitDelay = p.grace(spec)
	runErr := cmd.Run()
	run, readErr := ReadResult(resultPath)
	if readErr != nil {
		if runErr == nil {
			runErr = errors.New("exited without writing a result")
		}
		return nil, fmt.Errorf("trial process: %w%s", runErr, lastLine(filepath.Join(dir, LogFile)))
	}
	return run, nil
}

// lastLine returns ": <last line of the log>" to explain a crashed child.
func lastLine(path string) string {
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
