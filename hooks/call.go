package hooks

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
}
