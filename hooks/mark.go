package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Mark is the evidence a profiler leaves on disk (Profiler.WithMark) from
// just before its first start POST until its stop was sent. A mark that
// outlives its process means that process died with the profiler possibly
// running. It holds no secret: the headers come from whoever stops it.
type Mark struct {
	PID            int      `json:"pid"`   // the process that started the profiler
	Phase          string   `json:"phase"` // the profiling phase that started it
	Origins        []string `json:"origins"`
	StopPath       string   `json:"stop_path"`
	TimeoutSeconds float64  `json:"timeout_seconds"`
	// StartedAt is when the start was about to be sent (wall-clock ns): a
	// start still on its way may reach the server until TimeoutSeconds
	// after it, so a stop on the dead process's behalf waits until then.
	StartedAt int64 `json:"started_at_ns,omitempty"`
}

// StartDeadline is when a start this mark records stops being on its
// way: the starts go to the origins one after another, each within
// TimeoutSeconds, so len(Origins) timeouts after the first was sent (zero
// time when unknown).
func (m Mark) StartDeadline() time.Time {
	if m.StartedAt <= 0 {
		return time.Time{}
	}
	return time.Unix(0, m.StartedAt).Add(m.StartWindow())
}

// StartWindow is how long the starts of the mark's origins may take in
// all: a timeout each.
func (m Mark) StartWindow() time.Duration {
	return time.Duration(float64(max(1, len(m.Origins))) * m.TimeoutSeconds * float64(time.Second))
}

// write writes m to path atomically (a reader sees all of it or nothing).
func (m Mark) write(path string) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadMark reads the mark at path; the error wraps os.ErrNotExist when there
// is none.
func ReadMark(path string) (Mark, error) {
	var m Mark
	b, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("read profiler mark: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("decode profiler mark %s: %w", path, err)
	}
	return m, nil
}

// StopMarked stops, on behalf of a process that died, the profiler it left a
// mark for at path: it POSTs h's stop route to each origin of the mark that
// is also in origins (a mark never sends the caller's credentials anywhere
// else), records note as each call's warning, and removes the mark. Without
// a mark it does nothing. The calls are returned even when some fail; the
// error says which.
func (c *Client) StopMarked(ctx context.Context, path string, origins []string, h plan.ProfilerHook, note string) ([]Call, error) {
	m, err := ReadMark(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		// Unreadable (cut short by the death it reports): stop every origin.
		m = Mark{Phase: "unknown", Origins: origins}
	}
	targets := slices.DeleteFunc(slices.Clone(m.Origins), func(o string) bool { return !slices.Contains(origins, o) })
	p := c.Profiler(targets, h)
	p.mark = path
	stopErr := p.stop(ctx, m.Phase, targets)
	calls := p.Calls()
	for i := range calls {
		calls[i].Warning = note
	}
	return calls, stopErr
}
