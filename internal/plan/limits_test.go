package plan

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withPhases is a valid profile whose load is a YAML-style phase list.
func withPhases() Profile {
	p := valid()
	p.Phases = []Phase{
		{Name: "warmup", Kind: KindWarmup, Concurrency: 1, Requests: 2, GracePeriod: -1},
		{Name: "profiling", Kind: KindProfiling, Rate: 5, RateMode: RatePoisson, Duration: 10, GracePeriod: 30},
	}
	return p
}

// onlyError asserts that err holds exactly one FieldError, for field, and
// returns its message.
func onlyError(t *testing.T, err error, field string) string {
	t.Helper()
	fes := FieldErrors(err)
	require.Len(t, fes, 1, "one problem, one line: %v", err)
	assert.Equal(t, field, fes[0].Field)
	return fes[0].Error()
}

// TestCheckRefusesNonFiniteFloats sets every float of Profile and Phase,
// found by reflection so that a float added later is covered too, to NaN
// and ±Inf: each is refused on one line naming the option and the value.
func TestCheckRefusesNonFiniteFloats(t *testing.T) {
	t.Parallel()
	base := func() Profile {
		p := withPhases()
		p.BenchmarkDuration = Ptr(10.0) // so that a grace period is allowed
		p.OutputTokensMean = Ptr(8)     // so that an OSL stddev is allowed
		return p
	}
	floats := 0
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, f := range fields(reflect.TypeFor[Profile]()) {
			if f.Type != reflect.TypeFor[float64]() && f.Type != reflect.TypeFor[*float64]() {
				continue
			}
			floats++
			p := base()
			fv := reflect.ValueOf(&p).Elem().FieldByIndex(f.Index)
			if f.Type.Kind() == reflect.Pointer {
				fv.Set(reflect.ValueOf(Ptr(x)))
			} else {
				fv.SetFloat(x)
			}
			msg := onlyError(t, p.Check(), jsonName(f))
			assert.Equal(t, "--"+flagName(jsonName(f))+" must be a finite number, got "+fmtFloat(x), msg)
		}
		phaseType := reflect.TypeFor[Phase]()
		for i := range phaseType.NumField() {
			f := phaseType.Field(i)
			if f.Type.Kind() != reflect.Float64 {
				continue
			}
			floats++
			p := base()
			reflect.ValueOf(&p.Phases[1]).Elem().Field(i).SetFloat(x)
			msg := onlyError(t, p.Check(), "phases[1]."+jsonName(f))
			assert.Equal(t, "phases[1]."+jsonName(f)+" must be a finite number, got "+fmtFloat(x), msg)
		}
	}
	assert.GreaterOrEqual(t, floats, 3*13, "every float option was tried")
}

func fmtFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case x > 0:
		return "+Inf"
	}
	return "-Inf"
}

// TestCheckRefusesAbsurdValues: magnitudes past which a conversion
// overflows or the client exhausts memory are refused; the bounds
// themselves are accepted.
func TestCheckRefusesAbsurdValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		edit  func(*Profile)
		field string
		want  string // "" = accepted
	}{
		{"duration of a year", func(p *Profile) { p.BenchmarkDuration = Ptr(MaxSeconds) }, "", ""},
		{"duration overflowing time.Duration", func(p *Profile) { p.BenchmarkDuration = Ptr(1e12) }, "benchmark_duration",
			"--benchmark-duration must be at most 31536000 seconds (one year), got 1e+12"},
		{"timeout", func(p *Profile) { p.RequestTimeoutSeconds = 1e10 }, "request_timeout_seconds", "--request-timeout-seconds must be at most 31536000"},
		{"grace", func(p *Profile) { p.BenchmarkDuration, p.BenchmarkGracePeriod = Ptr(1.0), Ptr(1e9) }, "benchmark_grace_period", "--benchmark-grace-period must be at most"},
		{"warmup duration", func(p *Profile) { p.WarmupDuration = Ptr(4e7) }, "warmup_duration", "--warmup-duration must be at most"},
		{"hook timeout", func(p *Profile) { p.ResetKVCacheTimeoutSeconds = Ptr(1e300) }, "reset_kv_cache_timeout_seconds", "--reset-kv-cache-timeout-seconds must be at most"},
		{"retry budget", func(p *Profile) { p.ResetKVCacheMaxRetrySeconds = Ptr(1e300) }, "reset_kv_cache_max_retry_seconds", "--reset-kv-cache-max-retry-seconds must be at most"},
		{"profiler timeout", func(p *Profile) { p.ServerProfilerTimeoutSeconds = Ptr(1e300) }, "server_profiler_timeout_seconds", "--server-profiler-timeout-seconds must be at most"},
		{"rate of one per nanosecond", func(p *Profile) { p.RequestRate = Ptr(MaxRate) }, "", ""},
		{"rate with a 0 ns interval", func(p *Profile) { p.RequestRate = Ptr(2e9) }, "request_rate",
			"--request-rate must be at most 1e+09 requests/s (one per nanosecond), got 2e+09"},
		{"rate whose gap overflows", func(p *Profile) { p.RequestRate = Ptr(1e-12) }, "request_rate",
			"--request-rate must be at least 3.17e-08 requests/s (one a year), got 1e-12"},
		{"concurrency bound", func(p *Profile) { p.Concurrency = Ptr(MaxConcurrency) }, "", ""},
		{"concurrency", func(p *Profile) { p.Concurrency = Ptr(MaxConcurrency + 1) }, "concurrency", "--concurrency must be at most 1048576, got 1048577"},
		{"request count", func(p *Profile) { p.RequestCount = Ptr(1_000_000_000_000) }, "request_count", "--request-count must be at most 1000000000"},
		{"warmup count", func(p *Profile) { p.WarmupRequestCount = Ptr(math.MaxInt) }, "warmup_request_count", "--warmup-request-count must be at most"},
		{"isl", func(p *Profile) { p.SyntheticInputTokensMean = 1 << 40 }, "synthetic_input_tokens_mean", "--synthetic-input-tokens-mean must be at most 16777216"},
		{"isl stddev", func(p *Profile) { p.SyntheticInputTokensStddev = 1e300 }, "synthetic_input_tokens_stddev", "--synthetic-input-tokens-stddev must be at most 16777216 tokens"},
		{"osl", func(p *Profile) { p.OutputTokensMean = Ptr(math.MaxInt) }, "output_tokens_mean", "--output-tokens-mean must be at most"},
		{"osl stddev", func(p *Profile) { p.OutputTokensMean, p.OutputTokensStddev = Ptr(8), 1e20 }, "output_tokens_stddev", "--output-tokens-stddev must be at most"},
		{"entries", func(p *Profile) { p.NumDatasetEntries = MaxDatasetEntries + 1 }, "num_dataset_entries", "--num-dataset-entries must be at most 1048576"},
		{"dataset tokens", func(p *Profile) { p.NumDatasetEntries, p.SyntheticInputTokensMean = 1<<20, 1<<11 }, "num_dataset_entries",
			"--num-dataset-entries × --synthetic-input-tokens-mean is 2147483648 prompt tokens, more than the 1073741824"},
		{"dataset tokens bound", func(p *Profile) { p.NumDatasetEntries, p.SyntheticInputTokensMean = 1<<20, 1<<10 }, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := valid()
			tc.edit(&p)
			err := p.Check()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			assert.Contains(t, onlyError(t, err, tc.field), tc.want)
		})
	}
}

func TestCheckPhaseBounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		edit  func(*Phase)
		field string
		want  string
	}{
		{"rate", func(ph *Phase) { ph.Rate = 1e10 }, "phases[1].rate", "phases[1].rate must be at most 1e+09 requests/s"},
		{"negative rate", func(ph *Phase) { ph.Rate, ph.RateMode = -1, "" }, "phases[1].rate", "phases[1].rate must be greater than 0, got -1"},
		{"duration", func(ph *Phase) { ph.Duration = 1e11 }, "phases[1].duration", "phases[1].duration must be at most 31536000 seconds"},
		{"grace", func(ph *Phase) { ph.GracePeriod = 1e11 }, "phases[1].grace_period", "phases[1].grace_period must be at most"},
		{"concurrency", func(ph *Phase) { ph.Concurrency = 1 << 30 }, "phases[1].concurrency", "phases[1].concurrency must be at most 1048576"},
		{"negative concurrency", func(ph *Phase) { ph.Rate, ph.Concurrency = 0, -1 }, "phases[1].concurrency", "must not be negative, got -1"},
		{"requests", func(ph *Phase) { ph.Requests = 1 << 40 }, "phases[1].requests", "phases[1].requests must be at most 1000000000"},
		{"negative requests", func(ph *Phase) { ph.Duration, ph.Requests = 0, -1 }, "phases[1].requests", "must be at least 1, got -1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := withPhases()
			tc.edit(&p.Phases[1])
			assert.Contains(t, onlyError(t, p.Check(), tc.field), tc.want)
		})
	}
	p := withPhases()
	p.Phases[1].GracePeriod = -1 // wait for every request
	require.NoError(t, p.Check())
}

// TestCheckOneLinePerProblem: an empty --model is one problem, not "is
// required" plus "must not be empty".
func TestCheckOneLinePerProblem(t *testing.T) {
	t.Parallel()
	p := valid()
	p.Model = []string{""}
	assert.Equal(t, "--model must not be empty: name the served model, e.g. --model my-model", onlyError(t, p.Check(), "model"))
	p.Model = nil
	assert.Contains(t, onlyError(t, p.Check(), "model"), "--model is required")

	p = withPhases()
	p.Phases[0].Name, p.Phases[1].Name = "", ""
	fes := FieldErrors(p.Check())
	require.Len(t, fes, 2, "each nameless phase once, no \"used twice\"")
	assert.Equal(t, "phases[0].name is required", fes[0].Error())
}

func TestCheckSecondsAndConfidence(t *testing.T) {
	t.Parallel()
	require.NoError(t, CheckSeconds("cooldown_seconds", 0, true))
	require.NoError(t, CheckSeconds("cooldown_seconds", MaxSeconds, true))
	assert.EqualError(t, CheckSeconds("cooldown_seconds", math.Inf(1), true), "--cooldown-seconds must be a finite number, got +Inf")
	assert.EqualError(t, CheckSeconds("cooldown_seconds", -1, true), "--cooldown-seconds must be 0 or more, got -1")
	assert.EqualError(t, CheckSeconds("timeout", 0, false), "--timeout must be greater than 0, got 0")
	assert.ErrorContains(t, CheckSeconds("cooldown_seconds", 1e10, true), "must be at most 31536000 seconds (one year)")

	require.NoError(t, CheckConfidence("confidence_level", 0.95))
	for _, x := range []float64{0, 1, -0.5, 1.5} {
		assert.ErrorContains(t, CheckConfidence("confidence_level", x), "--confidence-level must be between 0 and 1 (exclusive)")
	}
	assert.EqualError(t, CheckConfidence("confidence_level", math.NaN()), "--confidence-level must be a finite number, got NaN")
	var fe *FieldError
	assert.ErrorAs(t, CheckConfidence("confidence_level", 2), &fe)
}

// TestOptionSetRefusesIntOverflow: a float beyond int64 (from Starlark or
// YAML) is refused rather than converted to an undefined int.
func TestOptionSetRefusesIntOverflow(t *testing.T) {
	t.Parallel()
	o, ok := LookupOption("concurrency")
	require.True(t, ok)
	p := valid()
	for _, x := range []float64{1e300, -1e300, 9223372036854775808.0, math.NaN(), math.Inf(1)} {
		assert.ErrorContains(t, o.Set(&p, x), "want int, got float", x)
	}
	require.NoError(t, o.Set(&p, 8.0))
	assert.Equal(t, 8, *p.Concurrency)
}

func TestRedactURLHidesEveryPassword(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"http://user:pw@h:1/v1":           "http://<redacted>@h:1/v1",
		"http://user:p%61ss@h:1":          "http://<redacted>@h:1", // escaped as written, not as url.URL re-escapes it
		"http://user:pass@h:badport/x":    "http://<redacted>@h:badport/x",
		"user:pass@h:8000":                "<redacted>@h:8000", // no scheme: read as http://
		"http://a@b:c@h/p@q?x=@#@":        "http://<redacted>@h/p@q?x=@#@",
		"http://h:1/path@x":               "http://h:1/path@x",
		" http://u:secret@h":              " http://<redacted>@h",
		"user:pw@host/x://y":              "<redacted>@host/x://y",
		"https://[::1]:8000/v1":           "https://[::1]:8000/v1",
		"https://tok@[::1]:8000/v1?a=b#c": "https://<redacted>@[::1]:8000/v1?a=b#c",
	}
	for raw, want := range cases {
		assert.Equal(t, want, RedactURL(raw), raw)
	}
	// The message of an unparsable URL holds no password.
	p := valid()
	p.URL = []string{"http://user:hunter2@h:badport"}
	msg := onlyError(t, p.Check(), "url")
	assert.NotContains(t, msg, "hunter2")
}

func TestCheckHeaderHidesSecrets(t *testing.T) {
	t.Parallel()
	require.NoError(t, CheckHeader("X-Trace: a b"))
	for _, h := range []string{"Bad Name Authorization: s3cret", "Authorization Bearer s3cret", "Cookie\n: s3cret", "x-api-key s3cret"} {
		err := CheckHeader(h)
		require.Error(t, err, h)
		assert.NotContains(t, err.Error(), "s3cret", h)
		assert.True(t, strings.HasSuffix(err.Error(), Redacted+`"`), err.Error())
	}
}
