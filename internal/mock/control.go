package mock

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// EventKind names an entry of the control event log.
type EventKind string

// The kinds of control events.
const (
	EventReset        EventKind = "reset"         // POST /reset_prefix_cache or /flush_cache
	EventStartProfile EventKind = "start_profile" // POST /start_profile
	EventStopProfile  EventKind = "stop_profile"  // POST /stop_profile
	EventRequestStart EventKind = "request_start" // an inference request arrived
	EventRequestEnd   EventKind = "request_end"   // an inference request's reply is complete
)

// maxEvents and maxEventBytes cap the event log (about 100 MB of events
// of a few headers, and 64 MiB of paths and header names however many a
// client sends); later events are counted as dropped.
const (
	maxEvents     = 1_000_000
	maxEventBytes = 64 << 20
)

// Event is one entry of the control log. HeaderNames holds the sorted
// canonical names of the request's headers, never their values. Status is
// the answer's HTTP status: absent on request_start, 499 on request_end when
// the client went away before the reply was complete.
type Event struct {
	Kind        EventKind `json:"kind"`
	Path        string    `json:"path"`
	TNs         int64     `json:"t_ns"` // monotonic nanoseconds since the server started
	HeaderNames []string  `json:"header_names"`
	Status      int       `json:"status,omitempty"`
}

// Control is the state served at GET /mock/control: admin-call counters
// (successful calls only), the number of inference requests received, the
// prefix cache's counters, and the events in the order they were logged (an
// admin call's when it is answered, after its effect). CacheHits counts
// the requests served with cached_tokens > 0; CacheEntries is the number of
// blocks the prefix cache holds now (only reset routes empty it, not
// POST /mock/control/clear).
type Control struct {
	ResetCount        int     `json:"reset_count"`
	ProfilerStarts    int     `json:"profiler_starts"`
	ProfilerStops     int     `json:"profiler_stops"`
	InferenceRequests int     `json:"inference_requests"`
	CacheHits         int     `json:"cache_hits"`
	CacheEntries      int     `json:"cache_entries"`
	DroppedEvents     int     `json:"dropped_events"`
	Events            []Event `json:"events"`
}

// controlLog is the mutex-guarded control state.
type controlLog struct {
	mu         sync.Mutex
	state      Control
	adminCalls int // admin calls seen by the fault knob since start or clear
	maxEvents  int
	bytes      int // the events' paths and header names, as counted by eventBytes
}

// Control returns a copy of the control state.
func (s *Server) Control() Control {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	c := s.ctl.state
	c.CacheHits, c.CacheEntries = s.cache.Counters()
	c.Events = slices.Clone(c.Events)
	if c.Events == nil {
		c.Events = []Event{}
	}
	return c
}

// record appends e, stamped now, to the event log.
func (s *Server) record(e Event) {
	e.TNs = time.Since(s.start).Nanoseconds()
	s.ctl.mu.Lock()
	s.appendLocked(e)
	s.ctl.mu.Unlock()
}

func (s *Server) appendLocked(e Event) {
	size := eventBytes(e)
	if len(s.ctl.state.Events) >= s.ctl.maxEvents || s.ctl.bytes+size > maxEventBytes {
		s.ctl.state.DroppedEvents++
		return
	}
	s.ctl.bytes += size
	s.ctl.state.Events = append(s.ctl.state.Events, e)
}

// eventBytes is about what e holds in memory beyond its fixed fields.
func eventBytes(e Event) int {
	n := len(e.Path)
	for _, h := range e.HeaderNames {
		n += len(h) + 16
	}
	return n
}

// controlState answers GET /mock/control; ?events=admin keeps only the
// admin routes' events (resets, profiler starts and stops), ?events=none
// none of them: the counters alone.
func (s *Server) controlState(w http.ResponseWriter, r *http.Request) {
	c := s.Control()
	switch r.URL.Query().Get("events") {
	case "admin":
		c.Events = slices.DeleteFunc(c.Events, func(e Event) bool {
			return e.Kind == EventRequestStart || e.Kind == EventRequestEnd
		})
	case "none":
		c.Events = []Event{}
	}
	writeJSON(w, http.StatusOK, c)
}

// clearControl answers POST /mock/control/clear: it empties the events and
// counters and re-arms the admin fault knob. The prefix cache is server
// state and stays; only its hit counter is zeroed.
func (s *Server) clearControl(w http.ResponseWriter, _ *http.Request) {
	s.ctl.mu.Lock()
	s.ctl.state = Control{}
	s.ctl.adminCalls, s.ctl.bytes = 0, 0
	s.cache.ClearHits()
	s.ctl.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// adminRoute describes one admin (control-hook) route.
type adminRoute struct {
	kind  EventKind
	check func(*http.Request) error // validates parameters (nil: none)
	act   func()                    // the call's effect (nil: none)
	reply func(http.ResponseWriter) // the success answer
}

// adminRoutes maps each admin path to its behaviour, after vLLM
// (/reset_prefix_cache, JSON success) and SGLang (/flush_cache with
// ?timeout=, plain-text answers). Both reset paths share one counter and
// empty the prefix cache, unless --reset-noop, or --reset-success-false on
// /reset_prefix_cache.
func (s *Server) adminRoutes() map[string]adminRoute {
	return map[string]adminRoute{
		"/reset_prefix_cache": {kind: EventReset, act: func() {
			if !s.cfg.ResetSuccessFalse {
				s.resetCache()
			}
		}, reply: func(w http.ResponseWriter) {
			writeJSON(w, http.StatusOK, map[string]bool{"success": !s.cfg.ResetSuccessFalse})
		}},
		"/flush_cache":   {kind: EventReset, check: checkFlushTimeout, act: s.resetCache, reply: textReply("Cache flushed.")},
		"/slots/{id}":    s.eraseSlot(), // llama-server
		"/start_profile": {kind: EventStartProfile, reply: textReply("Start profiling.")},
		"/stop_profile":  {kind: EventStopProfile, reply: textReply("Stop profiling. This will take some time.")},
	}
}

// resetCache empties the prefix cache, unless --reset-noop.
func (s *Server) resetCache() {
	if !s.cfg.ResetNoop {
		s.cache.Reset()
	}
}

func textReply(body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { writeText(w, body) }
}

// checkFlushTimeout validates SGLang's optional ?timeout=<seconds>.
func checkFlushTimeout(r *http.Request) error {
	raw := r.URL.Query().Get("timeout")
	if raw == "" {
		return nil
	}
	t, err := strconv.ParseFloat(raw, 64)
	if err != nil || t < 0 || math.IsInf(t, 0) || math.IsNaN(t) {
		return fmt.Errorf("timeout must be a number of seconds >= 0, got %q", raw)
	}
	return nil
}

// admin serves one admin route. Every call is an event; only calls that
// answer normally increment the counters. Order of checks: method (405),
// parameters (400), then the fault knob (the first --admin-fail-count
// calls that get this far answer --admin-fail-status, counted in arrival
// order), then --admin-latency-ms, then the call's effect (a reset empties
// the cache and begins a trial), its event and counter, and the answer.
// Once past the checks a call runs to its end even if its client has gone
// (as vLLM's handler does), so a counted reset has always emptied the
// cache, and its event is logged when it has. Admin routes never require
// the API key and never count as inference.
func (s *Server) admin(route adminRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ev := Event{Kind: route.kind, Path: r.URL.Path, HeaderNames: headerNames(r.Header)}
		if r.Method != http.MethodPost {
			ev.Status = http.StatusMethodNotAllowed
			s.record(ev)
			writeMethodNotAllowed(w, r)
			return
		}
		if route.check != nil {
			if err := route.check(r); err != nil {
				ev.Status = http.StatusBadRequest
				s.record(ev)
				writeError(w, ev.Status, "invalid_request_error", err.Error())
				return
			}
		}
		fault := s.admitAdmin()
		if s.adminDelay > 0 {
			time.Sleep(s.adminDelay) // not cut short by the client leaving
		}
		if fault {
			ev.Status = s.cfg.AdminFailStatus
			s.record(ev)
			writeError(w, ev.Status, "mock_admin_fault", "injected by --admin-fail-status")
			return
		}
		if route.act != nil {
			route.act()
		}
		if route.kind == EventReset { // a trial begins (--trial-jitter-cv)
			s.newTrial()
		}
		ev.Status = http.StatusOK
		s.countAdmin(ev)
		route.reply(w)
	}
}

// writeMethodNotAllowed answers 405 with an OpenAI-shaped error naming
// the one method the route takes, POST.
func writeMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed, use POST")
}

// admitAdmin applies the fault knob to an admin call on its arrival and
// reports whether the call is a fault.
func (s *Server) admitAdmin() (fault bool) {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	fault = s.ctl.adminCalls < s.cfg.AdminFailCount
	s.ctl.adminCalls++
	return fault
}

// countAdmin records the event of an admin call that answered normally,
// stamped now, and bumps its counter, together.
func (s *Server) countAdmin(ev Event) {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	ev.TNs = time.Since(s.start).Nanoseconds()
	s.appendLocked(ev)
	switch ev.Kind {
	case EventReset:
		s.ctl.state.ResetCount++
	case EventStartProfile:
		s.ctl.state.ProfilerStarts++
	case EventStopProfile:
		s.ctl.state.ProfilerStops++
	}
}

// headerNames returns the sorted canonical names of h (never values).
func headerNames(h http.Header) []string {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, http.CanonicalHeaderKey(name))
	}
	slices.Sort(names)
	return names
}
