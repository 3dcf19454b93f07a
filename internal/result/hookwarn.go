package result

import (
	"slices"
	"strings"
)

// Beginnings of the run warnings that say the server a run measured was not
// in the state its numbers assume, because of what the control hooks did or
// could not do: its profiler, its prefix cache. The runs that carry one are
// flagged wherever runs are listed together (a sweep's progress lines and
// its table's notes, compare), as CLIENT-BOUND and a KV-cache reset that did
// not clear the cache are.
const (
	// WarnProfilerStopFailed begins the warning of a profiler stop that
	// failed (hooks.StopError), the run's own or one the sweep runner sent
	// on its behalf: the profiler may still be running after the run.
	WarnProfilerStopFailed = "server profiler stop failed"
	// WarnCacheWarm begins the warning of a run without a KV-cache reset
	// whose prompts were served from the prefix cache on their first
	// request: its TTFT measured cache hits.
	WarnCacheWarm = "prefix cache warm at the start"
	// WarnProfilerMayRun begins the warning a sweep puts on a trial that ran
	// after a profiler stop on its server failed: the profiler may have been
	// running during it.
	WarnProfilerMayRun = "server profiler possibly running during this trial"
	// warnLateReset begins the warning a sweep puts on the trial after one
	// whose KV-cache reset got no answer (runner's lateReset): that reset
	// may have emptied the cache during it.
	warnLateReset = "the previous trial's reset of "
	// WarnOwnLateReset begins the warning of a run whose own KV-cache reset
	// had an attempt that got no answer before a retry was answered: that
	// attempt may have emptied the cache during the run.
	WarnOwnLateReset = "the KV-cache reset of "
)

// hookFlags are the short names of those warnings, by their beginnings.
var hookFlags = []struct{ prefix, flag string }{
	{WarnProfilerStopFailed, "server profiler stop failed"},
	{WarnCacheWarm, "prefix cache warm at the start"},
	{WarnProfilerMayRun, "server profiler possibly running"},
	{warnLateReset, "a KV-cache reset that got no answer may have run during it"},
	{WarnOwnLateReset, "a KV-cache reset that got no answer may have run during it"},
}

// HookFlag is the short name of a warning that says the server was not in
// the state the run's numbers assume (see WarnProfilerStopFailed and the
// others), "" for any other warning. A KV-cache reset that did not clear the
// cache has its own flag (Audit.KVReset) and is not one of them.
func HookFlag(warning string) string {
	for _, f := range hookFlags {
		if strings.HasPrefix(warning, f.prefix) {
			return f.flag
		}
	}
	return ""
}

// HookWarnings are the warnings of ws that HookFlag names, in order.
func HookWarnings(ws []string) []string {
	var out []string
	for _, w := range ws {
		if HookFlag(w) != "" {
			out = append(out, w)
		}
	}
	return out
}

// HookFlags are the distinct flags of ws, in the order they first appear.
func HookFlags(ws []string) []string {
	var out []string
	for _, w := range ws {
		if f := HookFlag(w); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}
