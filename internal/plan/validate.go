package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// FieldError is one invalid option. Field is the snake_case option name (or a
// dotted path such as "phases[1].rate"); Error renders it as a flag.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if strings.ContainsAny(e.Field, ".[") {
		return e.Field + " " + e.Msg
	}
	return "--" + flagName(e.Field) + " " + e.Msg
}

// FieldErrors unpacks every FieldError joined into err.
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if fe, ok := e.(*FieldError); ok {
			out = append(out, fe)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		walk(errors.Unwrap(e))
	}
	walk(err)
	return out
}

// Check checks every option and combination, returning all problems at
// once (errors.Join of *FieldError), or nil. It never touches the network.
// (It is not named Validate so that kong does not run it on the raw flags
// before a YAML file or a trial spec has been merged in.)
func (p *Profile) Check() error {
	v := &validator{}
	v.check(len(p.Model) > 0 && p.Model[0] != "", "model", "is required: name the served model, e.g. --model my-model")
	for _, m := range p.Model {
		v.check(strings.TrimSpace(m) != "", "model", "must not be empty")
	}
	v.check(len(p.URL) > 0, "url", "is required, e.g. --url http://127.0.0.1:8000")
	for _, raw := range p.URL {
		v.url(raw)
	}
	v.oneOf("endpoint_type", p.EndpointType, EndpointChat, EndpointCompletions)
	if p.Endpoint != "" {
		v.check(strings.HasPrefix(p.Endpoint, "/") && !strings.Contains(p.Endpoint, "://"), "endpoint",
			fmt.Sprintf("must be a path starting with '/', got %q", p.Endpoint))
	}
	for _, h := range p.Header {
		k, val, ok := strings.Cut(h, ":")
		v.check(ok && isHeaderName(k) && !strings.ContainsFunc(val, isControl), "header",
			fmt.Sprintf("must be Key:Value with Key an HTTP header name and no control characters, got %q", redactHeaderArg(h)))
	}
	for _, e := range p.ExtraInputs {
		if _, err := ParseExtraInput(e); err != nil {
			v.add("extra_inputs", err.Error())
		}
	}
	v.check(p.RequestTimeoutSeconds > 0, "request_timeout_seconds", fmt.Sprintf("must be greater than 0, got %g", p.RequestTimeoutSeconds))
	v.check(p.MaxEventBytes == 0 || p.MaxEventBytes >= minEventBytes, "max_event_bytes",
		fmt.Sprintf("must be at least %d (omit it for 16 MiB), got %d", minEventBytes, p.MaxEventBytes))

	v.minInt("concurrency", p.Concurrency, 1)
	v.positive("request_rate", p.RequestRate)
	v.oneOf("request_rate_mode", p.RequestRateMode, RateConstant, RatePoisson)
	v.minInt("request_count", p.RequestCount, 1)
	v.positive("benchmark_duration", p.BenchmarkDuration)
	if p.BenchmarkGracePeriod != nil {
		v.check(*p.BenchmarkGracePeriod >= 0, "benchmark_grace_period", fmt.Sprintf("must be 0 or more, got %g", *p.BenchmarkGracePeriod))
		v.check(p.BenchmarkDuration != nil || len(p.Phases) > 0, "benchmark_grace_period", "needs --benchmark-duration")
	}
	if p.WarmupRequestCount != nil && *p.WarmupRequestCount <= 0 {
		v.add("warmup_request_count", fmt.Sprintf("must be greater than 0, got %d (omit it for no warmup)", *p.WarmupRequestCount))
	}
	if p.WarmupDuration != nil && *p.WarmupDuration <= 0 {
		v.add("warmup_duration", fmt.Sprintf("must be greater than 0, got %g (omit it for no warmup)", *p.WarmupDuration))
	}

	v.check(p.SyntheticInputTokensMean >= 1, "synthetic_input_tokens_mean", fmt.Sprintf("must be at least 1, got %d", p.SyntheticInputTokensMean))
	v.check(p.SyntheticInputTokensStddev >= 0, "synthetic_input_tokens_stddev", fmt.Sprintf("must be 0 or more, got %g", p.SyntheticInputTokensStddev))
	v.minInt("output_tokens_mean", p.OutputTokensMean, 1)
	v.check(p.OutputTokensStddev >= 0, "output_tokens_stddev", fmt.Sprintf("must be 0 or more, got %g", p.OutputTokensStddev))
	v.check(p.OutputTokensStddev == 0 || p.OutputTokensMean != nil, "output_tokens_stddev", "needs --output-tokens-mean")
	v.check(p.NumDatasetEntries >= 1, "num_dataset_entries", fmt.Sprintf("must be at least 1, got %d", p.NumDatasetEntries))

	v.hooks(p)
	if len(p.Phases) > 0 {
		v.phases(p.Phases)
	}
	return errors.Join(v.errs...)
}

func (v *validator) hooks(p *Profile) {
	v.oneOf("server", p.Server, "", "vllm", "sglang", "trtllm")
	v.hookPath("reset_kv_cache_path", p.ResetKVCachePath)
	v.hookPath("server_profiler_start_path", p.ServerProfilerStartPath)
	v.hookPath("server_profiler_stop_path", p.ServerProfilerStopPath)
	v.positive("reset_kv_cache_timeout_seconds", p.ResetKVCacheTimeoutSeconds)
	v.positive("server_profiler_timeout_seconds", p.ServerProfilerTimeoutSeconds)
	if p.ResetKVCacheMaxRetrySeconds != nil && *p.ResetKVCacheMaxRetrySeconds < 0 {
		v.add("reset_kv_cache_max_retry_seconds", fmt.Sprintf("must be 0 or more, got %g", *p.ResetKVCacheMaxRetrySeconds))
	}
	if r := servers[p.Server].Refusal; r != "" {
		if p.ResetHook().Enabled {
			v.add("reset_kv_cache", "cannot be used with --server "+p.Server+": "+r)
		}
		if p.ProfilerHook().Enabled {
			v.add("server_profiler", "cannot be used with --server "+p.Server+": "+r)
		}
	}
	for _, raw := range p.URL {
		if u, err := url.Parse(normalizeURL(raw)); err == nil && u.Scheme != "http" && u.Scheme != "https" &&
			(p.ResetHook().Enabled || p.ProfilerHook().Enabled) {
			v.add("url", fmt.Sprintf("control hooks need HTTP transport, got scheme %q", u.Scheme))
		}
	}
}

func (v *validator) phases(phases []Phase) {
	profiling := 0
	names := map[string]bool{}
	for i, ph := range phases {
		at := func(f string) string { return fmt.Sprintf("phases[%d].%s", i, f) }
		v.check(ph.Name != "", at("name"), "is required")
		v.check(!names[ph.Name], at("name"), fmt.Sprintf("%q is used twice", ph.Name))
		names[ph.Name] = true
		v.check(ph.Kind == KindWarmup || ph.Kind == KindProfiling, at("kind"),
			fmt.Sprintf("must be warmup or profiling, got %q", ph.Kind))
		if ph.Kind == KindProfiling {
			profiling++
		}
		v.check(ph.Concurrency >= 0, at("concurrency"), fmt.Sprintf("must not be negative, got %d", ph.Concurrency))
		v.check(ph.Rate > 0 || ph.Concurrency >= 1, at("concurrency"), "or rate is required")
		v.check(ph.Rate >= 0, at("rate"), fmt.Sprintf("must be greater than 0, got %g", ph.Rate))
		if ph.Rate > 0 {
			v.check(ph.RateMode == RateConstant || ph.RateMode == RatePoisson, at("type"),
				fmt.Sprintf("must be constant or poisson for a rate phase, got %q", ph.RateMode))
		}
		v.check(ph.Requests > 0 || ph.Duration > 0, at("requests"), "or duration is required")
		v.check(ph.Requests >= 0, at("requests"), fmt.Sprintf("must be greater than 0, got %d", ph.Requests))
		v.check(ph.Duration >= 0, at("duration"), fmt.Sprintf("must be greater than 0, got %g", ph.Duration))
		v.check(!(i == 0 && ph.Seamless), at("seamless"), "is not allowed on the first phase")
	}
	v.check(profiling > 0, "phases", "need at least one profiling phase")
}

// minEventBytes is the smallest --max-event-bytes: below it, real chunks
// (a few hundred bytes each) would fail.
const minEventBytes = 4096

type validator struct{ errs []error }

func (v *validator) add(field, msg string) {
	v.errs = append(v.errs, &FieldError{Field: field, Msg: msg})
}

func (v *validator) check(ok bool, field, msg string) {
	if !ok {
		v.add(field, msg)
	}
}

func (v *validator) oneOf(field, got string, allowed ...string) {
	for _, a := range allowed {
		if got == a {
			return
		}
	}
	var shown []string
	for _, a := range allowed {
		if a != "" {
			shown = append(shown, a)
		}
	}
	v.add(field, fmt.Sprintf("must be one of %s, got %q", strings.Join(shown, ", "), got))
}

func (v *validator) minInt(field string, p *int, lo int) {
	if p != nil && *p < lo {
		v.add(field, fmt.Sprintf("must be at least %d, got %d", lo, *p))
	}
}

func (v *validator) positive(field string, p *float64) {
	if p != nil && !(*p > 0) {
		v.add(field, fmt.Sprintf("must be greater than 0, got %g", *p))
	}
}

func (v *validator) hookPath(field, path string) {
	if path == "" {
		return
	}
	v.check(strings.HasPrefix(path, "/") && !strings.Contains(path, "://"), field,
		fmt.Sprintf("must be a relative path starting with '/', got %q", path))
}

func (v *validator) url(raw string) {
	u, err := url.Parse(normalizeURL(raw))
	switch {
	case err != nil:
		v.add("url", fmt.Sprintf("is not a URL: %q", RedactURL(raw)))
	case u.Host == "":
		v.add("url", fmt.Sprintf("has no host: %q", RedactURL(raw)))
	case u.Scheme != "http" && u.Scheme != "https":
		v.add("url", fmt.Sprintf("must use http or https, got %q", u.Scheme))
	}
}

// ParseExtraInput parses one --extra-inputs value: key:value (the value is
// decoded as JSON when it parses, else kept as a string) or a JSON object.
func ParseExtraInput(s string) (map[string]any, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("is not a valid JSON object: %v", err)
		}
		return m, nil
	}
	k, val, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return nil, fmt.Errorf("must be key:value or a JSON object, got %q", s)
	}
	var decoded any
	if err := json.Unmarshal([]byte(val), &decoded); err != nil {
		decoded = val
	}
	return map[string]any{strings.TrimSpace(k): decoded}, nil
}

// isHeaderName reports whether s is an HTTP header name (an RFC 9110 token).
func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// isControl reports the characters a header value may not hold.
func isControl(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }

// redactHeaderArg shows a malformed --header value without its secret: the
// name is what precedes the first ':' or blank.
func redactHeaderArg(h string) string {
	name, _, _ := strings.Cut(strings.TrimSpace(h), ":")
	if i := strings.IndexAny(name, " \t"); i >= 0 {
		name = name[:i]
	}
	if IsSecretHeader(name) {
		return name + " " + Redacted
	}
	return h
}
