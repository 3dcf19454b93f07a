package plan

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/seqdist"
)

// FieldError is one invalid option. Field is the snake_case option name (or a
// dotted path such as "phases[1].rate"); Error renders it as a flag.
type FieldError struct {
	Field string
	Msg   string
	// Where names the field as its source wrote it, when that was not a
	// flag ("bench.yaml:7: benchmark.dataset.prompts.isl"); "": the flag.
	Where string
}

func (e *FieldError) Error() string {
	if e.Where != "" {
		return e.Where + " " + e.Msg
	}
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
	v.allFinite(p)
	v.request(p)
	v.counts(p)
	v.warmup(p)
	v.network(p)
	v.clientIO(p)
	v.exports(p)
	v.cancellation(p)
	v.failedRequestThreshold(p)
	v.waitForModel(p)
	v.rampChecks(p)
	v.userCentric(p)
	v.capPolicy(p)
	v.prefill(p)
	v.dataset(p)
	v.inputs(p)
	v.traceReplay(p)
	v.cacheBust(p)
	v.promptCorpus(p)
	v.synthesis(p)
	v.scrape(p)
	v.hooks(p)
	v.goodput(p)
	v.integrations(p)
	if len(p.Phases) > 0 {
		v.phases(p.Phases)
	}
	return errors.Join(v.errs...)
}

// request checks what every request carries: the model, URLs, endpoint,
// headers, body extras and the reply limits.
func (v *validator) request(p *Profile) {
	v.check(len(p.Model) > 0, "model", "is required: name the served model, e.g. --model my-model")
	for _, m := range p.Model {
		v.check(strings.TrimSpace(m) != "", "model", "must not be empty: name the served model, e.g. --model my-model")
	}
	v.check(len(p.URL) > 0 || p.SageMakerOn(), "url", "is required, e.g. --url http://127.0.0.1:8000") // SageMaker: from --aws-region
	for _, raw := range p.URL {
		v.url(raw)
	}
	v.checkEndpoint(p)
	v.sigv4(p)
	v.streamCompletion(p)
	v.media(p)
	if err := CheckEndpointPath(p.Endpoint); p.Endpoint != "" && err != nil {
		v.add("endpoint", err.Error())
	}
	v.check(!strings.ContainsFunc(p.APIKey, isControl), "api_key",
		"holds a control character (a line break, say), which cannot be sent in an HTTP header: "+
			"give the key without it (the key is not shown)")
	for _, h := range p.Header {
		if err := CheckHeader(h); err != nil {
			v.add("header", err.Error())
		}
	}
	v.check(p.ModelSelectionStrategy != "weighted", "model_selection_strategy",
		"weighted needs a weight per model, which is not supported yet: use round_robin or random")
	v.check(p.SessionHeader == "" || isHeaderName(p.SessionHeader), "session_header",
		fmt.Sprintf("must be an HTTP header name, e.g. X-Session-ID, got %q", p.SessionHeader))
	for _, e := range p.ExtraInputs {
		m, err := ParseExtraInput(e)
		if err != nil {
			v.add("extra_inputs", err.Error())
			continue
		}
		for _, key := range []string{"n", "best_of"} {
			if n, ok := m[key]; ok && !isOne(n) && n != nil {
				v.add("extra_inputs", fmt.Sprintf("%s:%v asks for several choices per request: aiperf times choice 0 only, "+
					"and the server's usage would count every choice; remove it (send more requests instead)", key, n))
			}
		}
	}
	for _, name := range p.RedactParam {
		v.check(strings.TrimSpace(name) != "", "redact_param", "must name a URL query parameter or --extra-inputs key, got an empty name")
	}
	v.seconds("request_timeout_seconds", &p.RequestTimeoutSeconds, false)
	if x := p.MaxEventBytes; x != nil {
		v.check(*x >= minEventBytes && *x <= maxEventBytes, "max_event_bytes",
			fmt.Sprintf("must be between %d and %d (omit it for 16 MiB), got %d", minEventBytes, maxEventBytes, *x))
	}
}

// counts checks how much load is sent: concurrency, rate, request count,
// duration and the warmup's size.
func (v *validator) counts(p *Profile) {
	v.intRange("concurrency", p.Concurrency, 1, MaxConcurrency)
	v.rate("request_rate", p.RequestRate)
	v.arrival(p)
	v.intRange("request_count", p.RequestCount, 1, MaxRequests)
	v.seconds("benchmark_duration", p.BenchmarkDuration, false)
	if p.BenchmarkGracePeriod != nil {
		v.seconds("benchmark_grace_period", p.BenchmarkGracePeriod, true)
		v.check(p.BenchmarkDuration != nil || len(p.Phases) > 0, "benchmark_grace_period", "needs --benchmark-duration")
	}
	switch w := p.WarmupRequestCount; {
	case w != nil && *w <= 0:
		v.add("warmup_request_count", fmt.Sprintf("must be greater than 0, got %d (omit it for no warmup)", *w))
	default:
		v.intRange("warmup_request_count", w, 1, MaxRequests)
	}
	switch w := p.WarmupDuration; {
	case w != nil && *w <= 0 && !v.nonFinite["warmup_duration"]:
		v.add("warmup_duration", fmt.Sprintf("must be greater than 0, got %g (omit it for no warmup)", *w))
	default:
		v.seconds("warmup_duration", w, false)
	}
}

// exports checks the export file names, level and formats.
func (v *validator) exports(p *Profile) {
	v.check(!strings.ContainsAny(p.ProfileExportPrefix, `/\`) && p.ProfileExportPrefix != "." && p.ProfileExportPrefix != "..",
		"profile_export_prefix", fmt.Sprintf("must be a file name (the exports go to --artifact-dir), got %q", p.ProfileExportPrefix))
	v.oneOf("export_level", p.ExportLevel, "", ExportSummary, ExportRecords, ExportRaw)
	for _, f := range p.SummaryFormats { // YAML only: named by its key
		v.oneOf("artifacts.summary", f, "json", "csv")
	}
	v.check(len(p.SummaryFormats) == 0 || slices.Contains(p.SummaryFormats, "json"), "artifacts.summary",
		"must include json: the JSON summary is always written (list json alone to leave out the CSV)")
}

// cancellation checks --request-cancellation-rate and its delay.
func (v *validator) cancellation(p *Profile) {
	if x := p.RequestCancellationRate; x != nil && !v.nonFinite["request_cancellation_rate"] {
		v.check(*x > 0 && *x <= 100, "request_cancellation_rate", fmt.Sprintf("must be a percentage in (0, 100], got %g", *x))
	}
	v.seconds("request_cancellation_delay", p.RequestCancellationDelay, true)
	v.check(p.RequestCancellationDelay == nil || p.RequestCancellationRate != nil || v.nonFinite["request_cancellation_delay"],
		"request_cancellation_delay", "needs --request-cancellation-rate")
}

// warmup checks the warmup-specific load options: each needs a warmup.
func (v *validator) warmup(p *Profile) {
	v.intRange("num_warmup_sessions", p.NumWarmupSessions, 1, MaxRequests)
	v.intRange("warmup_concurrency", p.WarmupConcurrency, 1, MaxConcurrency)
	v.rate("warmup_request_rate", p.WarmupRequestRate)
	v.oneOf("warmup_arrival_pattern", p.WarmupArrivalPattern, "", RateConstant, RatePoisson, RateGamma)
	v.seconds("warmup_grace_period", p.WarmupGracePeriod, true)
	v.check(p.WarmupGracePeriod == nil || p.WarmupDuration != nil || v.nonFinite["warmup_grace_period"],
		"warmup_grace_period", "needs --warmup-duration")
	hasWarmup := p.WarmupRequestCount != nil || p.WarmupDuration != nil || p.NumWarmupSessions != nil
	for field, set := range map[string]bool{"warmup_concurrency": p.WarmupConcurrency != nil,
		"warmup_request_rate": p.WarmupRequestRate != nil, "warmup_arrival_pattern": p.WarmupArrivalPattern != "",
		"warmup_prefill_concurrency": p.WarmupPrefillConcurrency != nil, "warmup_concurrency_ramp_duration": p.WarmupConcurrencyRampDuration != nil,
		"warmup_request_rate_ramp_duration":        p.WarmupRequestRateRampDuration != nil,
		"warmup_prefill_concurrency_ramp_duration": p.WarmupPrefillConcurrencyRampDuration != nil} {
		v.check(!set || hasWarmup || len(p.Phases) > 0, field,
			"needs a warmup: --warmup-request-count, --num-warmup-sessions or --warmup-duration")
	}
}

// dataset checks the synthetic prompt options.
func (v *validator) dataset(p *Profile) {
	v.systemPrompt(p)
	v.intRange("synthetic_input_tokens_mean", &p.SyntheticInputTokensMean, 1, MaxTokens)
	v.tokens("synthetic_input_tokens_stddev", p.SyntheticInputTokensStddev)
	v.intRange("output_tokens_mean", p.OutputTokensMean, 1, MaxTokens)
	v.tokens("output_tokens_stddev", p.OutputTokensStddev)
	v.check(p.OutputTokensStddev == 0 || p.OutputTokensMean != nil || v.nonFinite["output_tokens_stddev"],
		"output_tokens_stddev", "needs --output-tokens-mean")
	v.intRange("num_dataset_entries", &p.NumDatasetEntries, 1, MaxDatasetEntries)
	isl := p.SyntheticInputTokensMean
	if p.SequenceDistribution != "" {
		isl = v.seqDist(p)
	}
	if n := p.NumDatasetEntries; n >= 1 && n <= MaxDatasetEntries &&
		isl >= 1 && isl <= MaxTokens && n*isl > MaxDatasetTokens {
		what := "--synthetic-input-tokens-mean"
		if p.SequenceDistribution != "" {
			what = "the largest ISL of --sequence-distribution"
		}
		v.add("num_dataset_entries", fmt.Sprintf("× %s is %d prompt tokens, more than the %d "+
			"(about 4 GB of text) generated before the first request: lower either", what, n*isl, MaxDatasetTokens))
	}
}

// seqDist checks --seq-dist and returns its largest ISL (0 when it does
// not parse).
func (v *validator) seqDist(p *Profile) int {
	v.check(p.InputFile == "", "sequence_distribution",
		"draws the ISL and OSL of synthetic prompts: it cannot be used with --input-file")
	v.check(!p.Spec().Rankings, "sequence_distribution",
		"does not apply to a rankings endpoint: use the --rankings-* lengths")
	d, err := seqdist.Parse(p.SequenceDistribution)
	if err != nil {
		v.add("sequence_distribution", fmt.Sprintf("%s: %v", strconv.Quote(p.SequenceDistribution), err))
		return 0
	}
	largest := 0
	for _, b := range d.Buckets {
		largest = max(largest, b.ISL)
	}
	return largest
}

// phaseName is AIPerf's rule for phase names: they name directories
// (phases/<name>/) and sweep paths.
var phaseName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// PhaseNameOK reports whether name is a phase name: letters, digits, _ and
// -, starting with a letter or _.
func PhaseNameOK(name string) bool { return phaseName.MatchString(name) }

func (v *validator) phases(phases []Phase) {
	profiling := 0
	names := map[string]bool{}
	for i, ph := range phases {
		at := func(f string) string { return phaseField(i, f) }
		v.check(ph.Name != "", at("name"), "is required")
		v.check(ph.Name == "" || PhaseNameOK(ph.Name), at("name"),
			fmt.Sprintf("%q is not a phase name: use letters, digits, _ and -, starting with a letter or _", ph.Name))
		v.check(ph.Name == "" || !names[strings.ToLower(ph.Name)], at("name"), fmt.Sprintf("%q is used twice (names are unique without case)", ph.Name))
		names[strings.ToLower(ph.Name)] = true
		v.check(ph.Kind == KindWarmup || ph.Kind == KindProfiling, at("kind"),
			fmt.Sprintf("must be warmup or profiling, got %q", ph.Kind))
		if ph.Kind == KindProfiling {
			profiling++
		}
		if ph.Concurrency < 0 {
			v.add(at("concurrency"), fmt.Sprintf("must not be negative, got %d", ph.Concurrency))
		} else {
			v.intRange(at("concurrency"), &ph.Concurrency, 0, MaxConcurrency)
		}
		v.check(ph.Rate != 0 || ph.Concurrency != 0 || ph.Fixed, at("concurrency"), "or rate is required, greater than 0")
		if ph.Rate != 0 {
			v.rate(at("rate"), &ph.Rate)
		}
		if ph.Rate > 0 {
			v.check(ph.RateMode == RateConstant || ph.RateMode == RatePoisson || ph.RateMode == RateGamma, at("type"),
				fmt.Sprintf("must be constant, poisson or gamma for a rate phase, got %q", ph.RateMode))
		}
		v.phaseSmoothness(at("smoothness"), ph)
		v.oneOf(at("cap_policy"), ph.CapPolicy, "", CapSkip, CapDelay)
		v.phaseRamps(at, ph)
		v.check(ph.Users == 0, at("users"), "is set by --user-centric-rate and --num-users, not on a listed phase")
		v.check(ph.Requests != 0 || ph.Duration != 0 || ph.Sessions != 0 || ph.Fixed, at("requests"), "or duration or sessions is required, greater than 0")
		if ph.Requests != 0 {
			v.intRange(at("requests"), &ph.Requests, 1, MaxRequests)
		}
		if ph.Duration != 0 {
			v.seconds(at("duration"), &ph.Duration, false)
		}
		if ph.GracePeriod >= 0 { // < 0: wait for every request
			v.seconds(at("grace_period"), &ph.GracePeriod, true)
		}
		v.check(!(i == 0 && ph.Seamless), at("seamless"), "is not allowed on the first phase")
		if c := ph.Cancellation; c != nil {
			v.check(c.Rate >= 0 && c.Rate <= 100, at("cancellation.rate"), fmt.Sprintf("must be a percentage in [0, 100], got %g", c.Rate))
			v.seconds(at("cancellation.delay"), &c.Delay, true)
		}
	}
	v.check(profiling > 0, "phases", "need at least one profiling phase")
}

// Bounds of --max-event-bytes: below the minimum real chunks (a few hundred
// bytes each) would fail; above the maximum one hostile reply could take
// gigabytes per request in flight.
const (
	minEventBytes = 4096
	maxEventBytes = 1 << 30
)

type validator struct {
	errs      []error
	nonFinite map[string]bool // fields refused as NaN or ±Inf: their range checks are skipped
}

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

// CheckURL checks one endpoint URL as a profile's validation does (a
// --url, a config file's url), for what writes one without running it
// (config init); the error is that validation's.
func CheckURL(raw string) error {
	var v validator
	v.url(raw)
	return errors.Join(v.errs...)
}

func (v *validator) url(raw string) {
	u, err := url.Parse(NormalizeURL(raw))
	switch {
	case err != nil && strings.Contains(raw, ","):
		v.add("url", fmt.Sprintf("is not a URL: %q: give each server its own --url (-u A -u B)", RedactURL(raw)))
	case err != nil:
		v.add("url", fmt.Sprintf("is not a URL: %q", RedactURL(raw)))
	case u.Hostname() == "" && u.Port() != "":
		v.add("url", fmt.Sprintf("has no host: %q (localhost:%s for this machine)", RedactURL(raw), u.Port()))
	case u.Hostname() == "":
		v.add("url", fmt.Sprintf("has no host: %q", RedactURL(raw)))
	case badPort(u) != "":
		v.add("url", fmt.Sprintf("%s: %q", badPort(u), RedactURL(raw)))
	case u.Scheme != "http" && u.Scheme != "https":
		v.add("url", fmt.Sprintf("must use http or https, got %q", u.Scheme))
	default:
		if err := CheckQuery(u.RawQuery); err != nil {
			v.add("url", fmt.Sprintf("%v, got %q", err, RedactURL(raw)))
		}
	}
}

// badPort says what is wrong with u's port, "" when it has none or one
// from 1 to 65535 (Go's parser accepts any digits).
func badPort(u *url.URL) string {
	p := u.Port()
	if p == "" {
		return ""
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("has port %s, not one from 1 to 65535", p)
	}
	return ""
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

// CheckHeaderName checks a header name given on its own (the key of a
// config file's headers: object): it must be an HTTP header name, an RFC
// 9110 token, so no colon, space or control character. A name with a
// colon would be sent under its part before the colon, the rest moving
// into the value. The error never shows what follows a secret name.
func CheckHeaderName(name string) error {
	if isHeaderName(name) {
		return nil
	}
	return fmt.Errorf("must be an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~; no colon, space or control character), got %q",
		redactHeaderArg(name))
}

// redactHeaderArg shows a malformed --header value without its secret: when
// what precedes the first ':' (all of it without one) names a secret header,
// only its leading header-name characters are shown.
func redactHeaderArg(h string) string {
	name, _, _ := strings.Cut(h, ":")
	if !IsSecretHeader(name) {
		return h
	}
	name = strings.TrimLeft(name, " \t")
	end := 0
	for end < len(name) && isHeaderName(name[end:end+1]) {
		end++
	}
	if end == 0 {
		return Redacted
	}
	return name[:end] + " " + Redacted
}
