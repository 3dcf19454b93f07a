package plan

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// DefaultGracePeriod is --benchmark-grace-period when not given.
const DefaultGracePeriod = 30.0

// ResetHook is the resolved --reset-kv-cache configuration.
type ResetHook struct {
	Enabled bool
	// Paths are POSTed in order to every origin.
	Paths []string
	// Slots erases every slot of a llama.cpp server instead of POSTing
	// Path: GET /slots, then POST /slots/{id}?action=erase for each id.
	Slots    bool
	Timeout  time.Duration // per attempt
	MaxRetry time.Duration // total retry budget; 0 = one attempt
	// Guessed: Paths is DefaultResetPath, chosen by neither
	// --reset-kv-cache-path nor --server; a 404 there is worth a hint.
	Guessed bool
	// Missing says why the --server preset's route may answer 404 (vLLM's
	// needs VLLM_SERVER_DEV_MODE=1); "" for none or an explicit path.
	Missing string
}

// Describe says what the reset will call on each origin, as `aiperf plan`
// shows it: the routes POSTed in order, or a llama.cpp server's slots.
func (h ResetHook) Describe() string {
	if h.Slots {
		return "GET /slots + POST /slots/{id}?action=erase"
	}
	return strings.Join(h.Paths, " + ")
}

// ProfilerHook is the resolved --server-profiler configuration.
type ProfilerHook struct {
	Enabled   bool
	StartPath string
	StopPath  string
	Timeout   time.Duration // per call
}

// serverRoutes are the control-hook routes of one inference server
// (shared/seeds/control-hooks-by-server.txt).
type serverRoutes struct {
	ResetPath, StartPath, StopPath string
	Slots                          bool // the reset erases every llama.cpp slot
	// ResetRefusal and ProfilerRefusal, when set, explain why that hook
	// cannot be enabled for this server.
	ResetRefusal, ProfilerRefusal string
	// ResetHint says what commonly keeps this server's cache warm through a
	// reset, for the warning of a reset the run shows did not clear it.
	ResetHint string
	// ResetMissing says why the preset's reset route may answer 404.
	ResetMissing string
}

// servers maps --server values to their routes.
var servers = map[string]serverRoutes{
	"vllm": {ResetPath: "/reset_prefix_cache", StartPath: "/start_profile", StopPath: "/stop_profile",
		ResetHint:    "vLLM: requests still running, or an offload tier (LMCache, CPU offload) that the reset does not empty",
		ResetMissing: "vLLM serves /reset_prefix_cache only when started with VLLM_SERVER_DEV_MODE=1 in its environment"},
	"sglang": {ResetPath: "/flush_cache", StartPath: "/start_profile", StopPath: "/stop_profile",
		ResetHint: "SGLang: the server was not idle; try --reset-kv-cache-path '/flush_cache?timeout=30'"},
	"trtllm": {ResetRefusal: trtllmRefusal, ProfilerRefusal: trtllmRefusal},
	"llamacpp": {Slots: true,
		ProfilerRefusal: "llama-server has no profiler routes; profile it with perf or nsys around the run instead",
		ResetHint:       "llama.cpp: the host-memory prompt cache outlives a slot erase; start llama-server with --cache-ram 0"},
}

// ServerNames are the values of --server.
var ServerNames = []string{"vllm", "sglang", "trtllm", "llamacpp"}

const trtllmRefusal = "trtllm-serve has no KV-cache reset route (block reuse is fixed at startup by " +
	"kv_cache_config.enable_block_reuse; disable it or restart the server between cells) and registers " +
	"/start_profile and /stop_profile only on builds with TensorRT-LLM PR #13872; drop --server trtllm " +
	"and pass explicit paths if your deployment has custom admin routes"

// ResetHint says what commonly keeps the cache of p's server warm through a
// reset; with no --server, what does for each server.
func (p *Profile) ResetHint() string {
	if h := servers[p.Server].ResetHint; h != "" {
		return h
	}
	var hints []string
	for _, name := range ServerNames {
		if h := servers[name].ResetHint; h != "" {
			hints = append(hints, h)
		}
	}
	return strings.Join(hints, "; ")
}

// ResetHook resolves the reset hook: any path, timeout or retry setting
// enables it; an explicit path beats the --server preset, which beats the default.
func (p *Profile) ResetHook() ResetHook {
	h := ResetHook{
		Enabled: p.ResetKVCache || len(p.ResetKVCachePath) > 0 || p.ResetKVCacheTimeoutSeconds != nil ||
			p.ResetKVCacheMaxRetrySeconds != nil,
		Paths:    p.ResetKVCachePath,
		Slots:    len(p.ResetKVCachePath) == 0 && servers[p.Server].Slots,
		Timeout:  seconds(deref(p.ResetKVCacheTimeoutSeconds, DefaultHookTimeoutSeconds)),
		MaxRetry: seconds(deref(p.ResetKVCacheMaxRetrySeconds, DefaultResetMaxRetrySeconds)),
	}
	if len(h.Paths) == 0 {
		h.Paths = []string{firstNonEmpty(servers[p.Server].ResetPath, DefaultResetPath)}
		h.Guessed = p.Server == ""
		h.Missing = servers[p.Server].ResetMissing
	}
	return h
}

// ProfilerHook resolves the profiler hook the same way as ResetHook.
func (p *Profile) ProfilerHook() ProfilerHook {
	return ProfilerHook{
		Enabled: p.ServerProfiler || p.ServerProfilerStartPath != "" || p.ServerProfilerStopPath != "" ||
			p.ServerProfilerTimeoutSeconds != nil,
		StartPath: firstNonEmpty(p.ServerProfilerStartPath, servers[p.Server].StartPath, DefaultProfilerStartPath),
		StopPath:  firstNonEmpty(p.ServerProfilerStopPath, servers[p.Server].StopPath, DefaultProfilerStopPath),
		Timeout:   seconds(deref(p.ServerProfilerTimeoutSeconds, DefaultHookTimeoutSeconds)),
	}
}

// endpointPath is the request path appended to every URL.
func (p *Profile) endpointPath() string {
	if p.Endpoint != "" {
		return p.Endpoint
	}
	if spec := p.Spec(); p.Streams() && spec.StreamPath != "" {
		return spec.StreamPath
	}
	return p.Spec().Path
}

// Origins are the unique scheme://host:port of every --url, in first-seen
// order: the targets of control hooks.
func (p *Profile) Origins() []string {
	var out []string
	seen := map[string]bool{}
	for _, raw := range p.URL {
		u, ok := parseOrigin(raw)
		if !ok {
			continue
		}
		key := u.Scheme + "://" + u.Hostname() + ":" + portOf(u)
		if !seen[key] {
			seen[key] = true
			out = append(out, u.Scheme+"://"+u.Host)
		}
	}
	return out
}

// Servers are the normalised origins of every --url (lower-case
// scheme://host:port, the default port spelled out, every loopback name
// and address spelled localhost), sorted: two cells load one server when
// their Servers share an element.
func (p *Profile) Servers() []string {
	var out []string
	for _, raw := range p.URL {
		u, ok := parseOrigin(raw)
		if !ok {
			continue
		}
		host := strings.ToLower(u.Hostname())
		if isLoopback(host) {
			host = "localhost"
		}
		if key := u.Scheme + "://" + net.JoinHostPort(host, portOf(u)); !slices.Contains(out, key) {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// isLoopback reports whether host is this machine: localhost (any case),
// 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parseOrigin parses a --url that names a host.
func parseOrigin(raw string) (*url.URL, bool) {
	u, err := url.Parse(NormalizeURL(raw))
	return u, err == nil && u.Host != ""
}

// PhaseList returns the phases to run: the YAML list when given, else a
// warmup phase (when --warmup-* is set) followed by one profiling phase.
func (p *Profile) PhaseList() []Phase {
	if len(p.Phases) > 0 {
		return p.Phases
	}
	prof := Phase{Name: KindProfiling, Kind: KindProfiling}
	switch {
	case p.UserCentricRate != nil:
		prof.Rate, prof.Users = *p.UserCentricRate, deref(p.NumUsers, 1)
		prof.Concurrency = deref(p.Concurrency, 0) // a cap only when given
	case p.RequestRate != nil || len(p.RateSeries) > 0:
		if prof.Rate, prof.RateSeries = deref(p.RequestRate, 0), p.RateSeries; len(p.RateSeries) > 0 {
			prof.Rate = MeanRate(p.RateSeries)
		}
		prof.RateMode, prof.Smoothness = p.ArrivalPattern(), p.smoothness(p.ArrivalPattern())
		prof.Concurrency, prof.CapPolicy = deref(p.Concurrency, 0), p.CapPolicy
	default:
		prof.Concurrency = deref(p.Concurrency, 1)
	}
	if p.BenchmarkDuration != nil {
		prof.Duration = *p.BenchmarkDuration
		prof.GracePeriod = deref(p.BenchmarkGracePeriod, DefaultGracePeriod)
	}
	prof.Sessions = deref(p.ConversationNum, 0)
	p.ramps(&prof, false)
	if p.FixedSchedule {
		p.FixSchedule(&prof)
	}
	switch {
	case p.RequestCount != nil:
		prof.Requests = *p.RequestCount
	case p.BenchmarkDuration == nil && prof.Sessions == 0 && !prof.Fixed:
		prof.Requests = max(10, 2*prof.Concurrency)
	}
	if p.WarmupRequestCount == nil && p.WarmupDuration == nil && p.NumWarmupSessions == nil {
		return []Phase{prof}
	}
	return []Phase{p.warmupPhase(prof), prof}
}

// WithoutWarmup is p with no warmup: its listed warmup phases dropped (the
// next phase then starts the run, never seamlessly) and the warmup flags
// that would make one cleared.
func (p Profile) WithoutWarmup() Profile {
	if len(p.Phases) > 0 {
		p.Phases = slices.DeleteFunc(slices.Clone(p.Phases), func(ph Phase) bool { return ph.Kind == KindWarmup })
		if len(p.Phases) > 0 {
			p.Phases[0].Seamless = false
		}
	}
	p.WarmupRequestCount, p.WarmupDuration, p.NumWarmupSessions = nil, nil, nil
	return p
}

// ArrivalPattern is the arrival pattern of the rate phases: the
// --arrival-pattern, except that --arrival-smoothness makes the default
// (poisson) gamma, as in AIPerf. (An explicit --arrival-pattern poisson cannot
// be told from the default here, so it too becomes gamma.)
func (p *Profile) ArrivalPattern() string {
	switch {
	case p.ArrivalSmoothness != nil && p.RequestRateMode == RatePoisson:
		return RateGamma
	case p.RequestRateMode == RateConcurrencyBurst: // the profiling phase has no rate: a rate warmup's is the default
		return RatePoisson
	}
	return p.RequestRateMode
}

// smoothness is the gamma shape of a phase with arrival pattern mode: the
// --arrival-smoothness, 1 when unset; 0 for the other patterns.
func (p *Profile) smoothness(mode string) float64 {
	if mode != RateGamma {
		return 0
	}
	return deref(p.ArrivalSmoothness, 1)
}

// warmupPhase is the warmup before prof, as AIPerf builds it: each load
// knob from its --warmup-* flag, else from the profiling phase (rate,
// arrival pattern, concurrency); one stop condition, the first given of
// --warmup-request-count, --num-warmup-sessions and --warmup-duration; and
// no time limit on its in-flight requests unless --warmup-grace-period.
func (p *Profile) warmupPhase(prof Phase) Phase {
	warm := Phase{Name: KindWarmup, Kind: KindWarmup, GracePeriod: -1} // never replays the schedule
	rate, mode := prof.Rate, prof.RateMode
	if prof.Users > 0 { // warms up in rate mode at the user-centric rate
		mode = p.ArrivalPattern()
	}
	if p.WarmupRequestRate != nil {
		rate, mode = *p.WarmupRequestRate, cmp.Or(mode, p.ArrivalPattern())
	}
	if p.WarmupArrivalPattern != "" {
		mode = p.WarmupArrivalPattern
	}
	if rate > 0 {
		warm.Rate, warm.RateMode, warm.Smoothness, warm.CapPolicy = rate, mode, p.smoothness(mode), p.CapPolicy
		warm.Concurrency = deref(p.WarmupConcurrency, deref(p.Concurrency, 0)) // a cap only when one was given
	} else {
		warm.Concurrency = deref(p.WarmupConcurrency, max(prof.Concurrency, 1))
	}
	p.ramps(&warm, true)
	switch {
	case p.WarmupRequestCount != nil:
		warm.Requests = *p.WarmupRequestCount
	case p.NumWarmupSessions != nil:
		warm.Sessions = *p.NumWarmupSessions
	default:
		warm.Duration = deref(p.WarmupDuration, 0)
		warm.GracePeriod = deref(p.WarmupGracePeriod, -1)
	}
	return warm
}

// ramps sets the ramps and the prefill cap of ph, a warmup's from its
// --warmup-* flags falling back to the profiling ones (AIPerf): the
// concurrency ramp where there is a concurrency or cap above 1 to raise,
// the rate ramp on a rate phase, the prefill ramp under a prefill cap
// above 1.
func (p *Profile) ramps(ph *Phase, warmup bool) {
	prefill, concRamp, rateRamp, prefillRamp := p.PrefillConcurrency, p.ConcurrencyRampDuration,
		p.RequestRateRampDuration, p.PrefillConcurrencyRampDuration
	if warmup {
		prefill, concRamp = cmp.Or(p.WarmupPrefillConcurrency, prefill), cmp.Or(p.WarmupConcurrencyRampDuration, concRamp)
		rateRamp = cmp.Or(p.WarmupRequestRateRampDuration, rateRamp)
		prefillRamp = cmp.Or(p.WarmupPrefillConcurrencyRampDuration, prefillRamp)
	}
	if n := deref(prefill, 0); n > 0 { // and the prefill cap, within the phase's concurrency
		ph.PrefillConcurrency = n
		if ph.Concurrency > 0 {
			ph.PrefillConcurrency = min(n, ph.Concurrency)
		}
	}
	if ph.Concurrency > 1 {
		ph.ConcurrencyRamp = deref(concRamp, 0)
	}
	if ph.Rate > 0 && ph.Users == 0 {
		ph.RateRamp = deref(rateRamp, 0)
	}
	if ph.PrefillConcurrency > 1 {
		ph.PrefillRamp = deref(prefillRamp, 0)
	}
}

// FixSchedule makes ph replay the dataset's fixed schedule: no rate, the
// --replay-speedup, and an in-flight cap only when --concurrency is given.
func (p *Profile) FixSchedule(ph *Phase) {
	ph.Fixed, ph.Rate, ph.RateMode, ph.Speedup = true, 0, "", deref(p.ReplaySpeedup, 0)
	ph.Smoothness, ph.ConcurrencyRamp, ph.RateRamp = 0, 0, 0
	ph.Concurrency = deref(p.Concurrency, 0)
}

// portOf is the URL's port, or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// NormalizeURL is a --url as requests go to it: http:// added when the
// scheme is missing, as AIPerf does.
func NormalizeURL(raw string) string {
	if !strings.Contains(raw, "://") {
		return "http://" + raw
	}
	return raw
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Ptr returns a pointer to v; handy for optional Profile fields.
func Ptr[T any](v T) *T { return &v }

// String renders a phase for plans, e.g. "profiling(poisson 20 req/s, cap
// 16, 90s)" or "profiling(fixed schedule, speed-up 2)"; the kind is shown
// when the name does not say it.
func (ph Phase) String() string {
	var parts []string
	if ph.Name != ph.Kind {
		parts = append(parts, ph.Kind)
	}
	if ph.Fixed {
		parts = append(parts, "fixed schedule")
		if ph.Speedup > 0 && ph.Speedup != 1 {
			parts = append(parts, fmt.Sprintf("speed-up %g", ph.Speedup))
		}
		if ph.Concurrency > 0 {
			parts = append(parts, fmt.Sprintf("cap %d", ph.Concurrency))
		}
	} else if ph.Users > 0 {
		parts = append(parts, fmt.Sprintf("user-centric %g req/s, %d users", ph.Rate, ph.Users))
		if ph.Concurrency > 0 {
			parts = append(parts, fmt.Sprintf("cap %d", ph.Concurrency))
		}
	} else if ph.Rate > 0 {
		parts = append(parts, fmt.Sprintf("%s %g req/s", ph.RateMode, ph.Rate))
		if ph.Concurrency > 0 {
			parts = append(parts, fmt.Sprintf("cap %d", ph.Concurrency))
		}
	} else {
		parts = append(parts, fmt.Sprintf("concurrency %d", ph.Concurrency))
	}
	if ph.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", ph.Requests))
	}
	if ph.Duration > 0 {
		parts = append(parts, fmt.Sprintf("%gs", ph.Duration))
	}
	if ph.Seamless {
		parts = append(parts, "seamless")
	}
	return ph.Name + "(" + strings.Join(parts, ", ") + ")"
}
