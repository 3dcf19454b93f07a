package hooks

import "time"

// Call is one control-plane POST as it happened: what the JSON export's
// `control_hooks` section, the console summary and the store show.
type Call struct {
	Hook       string  `json:"hook"`            // "reset_kv_cache", "profiler_start" or "profiler_stop"
	Phase      string  `json:"phase,omitempty"` // profiling phase that owned a profiler call
	Origin     string  `json:"origin"`          // scheme://host:port
	Path       string  `json:"path"`
	Status     int     `json:"status"` // last HTTP status; 0 when no response arrived
	Attempts   int     `json:"attempts"`
	DurationMs float64 `json:"duration_ms"` // first attempt start to last attempt end
	OK         bool    `json:"ok"`
	Error      string  `json:"error,omitempty"`   // why it failed (never a response body echo)
	Warning    string  `json:"warning,omitempty"` // e.g. 2xx with {"success": false}
	StartedAt  int64   `json:"started_at_ns"`     // wall-clock ns
	// Unanswered counts the attempts that were sent and got no answer (a
	// timeout, a connection dropped after the request went out, a Ctrl-C):
	// a server finishes a call whose client left, so each may still run
	// later, even when a retry was answered. UnansweredAt is when the last
	// of them was given up (wall-clock ns; 0 when none).
	Unanswered   int   `json:"unanswered_attempts,omitempty"`
	UnansweredAt int64 `json:"unanswered_at_ns,omitempty"`
}

// LateResetGrace is the least time a reset attempt that got no answer is
// waited for, after its client gave it up, before load is sent to its
// server: a server finishes a reset whose client left (vLLM's handler
// does), and that reset would empty the cache in the middle of the load.
// The wait is the reset's own timeout when that is longer: the server was
// given that long to answer, and gets as long again to finish.
const LateResetGrace = 10 * time.Second

// LateUntil is when c's unanswered attempts, made with timeout each, are
// no longer waited for (LateResetGrace): the zero time when every attempt
// was answered (or never sent).
func (c Call) LateUntil(timeout time.Duration) time.Time {
	if c.Unanswered == 0 {
		return time.Time{}
	}
	return time.Unix(0, c.UnansweredAt).Add(max(timeout, LateResetGrace))
}
