package plan

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/seqdist"
)

// Bounds of the numeric options. Check refuses a value beyond them before
// anything is sent: no benchmark means it, and past them a conversion
// overflows or the client exhausts its memory before the first request.
const (
	// MaxSeconds bounds every duration, timeout, grace period and cooldown:
	// one year. A time.Duration overflows at ~292 years, and the load engine
	// adds a phase's duration and grace period to the phase's start.
	MaxSeconds = 365 * 24 * 60 * 60.0
	// MaxRate is one request per nanosecond, the resolution of the
	// schedule: above it consecutive sends get the same send time.
	MaxRate = 1e9
	// MinRate is one request per MaxSeconds: below it the gap between two
	// sends overflows the schedule's nanosecond offsets.
	MinRate = 1 / MaxSeconds
	// MaxConcurrency bounds the requests in flight. Each holds a goroutine
	// and a connection (a file descriptor and a local port): a million is
	// beyond what one client host can open.
	MaxConcurrency = 1 << 20
	// MaxRequests bounds a request count: every request's record (a few
	// hundred bytes) is kept in memory until the exports are written.
	MaxRequests = 1_000_000_000
	// MaxTokens bounds token lengths (means and standard deviations). It is
	// above every model's context window (the largest hold ~10M tokens); a
	// prompt is held in memory as text, and a normal draw is converted to
	// an int.
	MaxTokens = seqdist.MaxTokens
	// MaxDatasetEntries bounds the synthetic prompts, all generated and held
	// in memory before the first request.
	MaxDatasetEntries = 1 << 20
	// MaxDatasetTokens bounds entries × mean prompt length: about 4 GB of
	// prompt text, generated before the first request.
	MaxDatasetTokens = 1 << 30
)

// CheckSeconds checks a duration option given in seconds (field is its
// snake_case name): finite, at most MaxSeconds, and greater than 0 or, when
// zeroOK, 0 or more. It returns a *FieldError or nil.
func CheckSeconds(field string, x float64, zeroOK bool) error {
	v := &validator{}
	v.seconds(field, &x, zeroOK)
	return v.first()
}

// CheckConfidence checks a confidence level (field is its snake_case name):
// strictly between 0 and 1. It returns a *FieldError or nil.
func CheckConfidence(field string, x float64) error {
	v := &validator{}
	if v.finite(field, x) && !(x > 0 && x < 1) {
		v.add(field, fmt.Sprintf("must be between 0 and 1 (exclusive), got %g", x))
	}
	return v.first()
}

// first is the validator's first error, or nil.
func (v *validator) first() error {
	if len(v.errs) == 0 {
		return nil
	}
	return v.errs[0]
}

// finite reports whether x is a finite number, refusing NaN and ±Inf.
func (v *validator) finite(field string, x float64) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		v.add(field, fmt.Sprintf("must be a finite number, got %g", x))
		return false
	}
	return true
}

// allFinite refuses every non-finite float of p and of its phases, found by
// reflection so that no float option can be missed, and remembers the fields
// it refused: the range checks skip them (one problem, one line).
func (v *validator) allFinite(p *Profile) {
	v.nonFinite = map[string]bool{}
	walk := func(s reflect.Value, name func(reflect.StructField) string) {
		for _, sf := range fields(s.Type()) {
			f := s.FieldByIndex(sf.Index)
			if f.Kind() == reflect.Pointer && !f.IsNil() {
				f = f.Elem()
			}
			if f.Kind() != reflect.Float64 {
				continue
			}
			if field := name(sf); !v.finite(field, f.Float()) {
				v.nonFinite[field] = true
			}
		}
	}
	walk(reflect.ValueOf(p).Elem(), jsonName)
	for i := range p.Phases {
		walk(reflect.ValueOf(&p.Phases[i]).Elem(), func(f reflect.StructField) string {
			return phaseField(i, jsonName(f))
		})
	}
}

// phaseField names a field of phases[i], as FieldError shows it.
func phaseField(i int, name string) string { return "phases[" + strconv.Itoa(i) + "]." + name }

// seconds checks an optional duration in seconds (see CheckSeconds).
func (v *validator) seconds(field string, x *float64, zeroOK bool) {
	switch {
	case x == nil || v.nonFinite[field] || !v.finite(field, *x):
	case zeroOK && *x < 0:
		v.add(field, fmt.Sprintf("must be 0 or more, got %g", *x))
	case !zeroOK && *x <= 0:
		v.add(field, fmt.Sprintf("must be greater than 0, got %g", *x))
	case *x > MaxSeconds:
		v.add(field, fmt.Sprintf("must be at most %.0f seconds (one year), got %g", MaxSeconds, *x))
	}
}

// rate checks an optional request rate: greater than 0 and within
// [MinRate, MaxRate].
func (v *validator) rate(field string, x *float64) {
	switch {
	case x == nil || v.nonFinite[field] || !v.finite(field, *x):
	case *x <= 0:
		v.add(field, fmt.Sprintf("must be greater than 0, got %g", *x))
	case *x > MaxRate:
		v.add(field, fmt.Sprintf("must be at most %g requests/s (one per nanosecond), got %g", float64(MaxRate), *x))
	case *x < MinRate:
		v.add(field, fmt.Sprintf("must be at least %.3g requests/s (one a year), got %g", MinRate, *x))
	}
}

// tokens checks a token-length standard deviation: 0 or more, at most MaxTokens.
func (v *validator) tokens(field string, x float64) {
	switch {
	case v.nonFinite[field] || !v.finite(field, x):
	case x < 0:
		v.add(field, fmt.Sprintf("must be 0 or more, got %g", x))
	case x > MaxTokens:
		v.add(field, fmt.Sprintf("must be at most %d tokens, got %g", MaxTokens, x))
	}
}

// intRange checks an optional int option: within [lo, hi].
func (v *validator) intRange(field string, p *int, lo, hi int) {
	switch {
	case p == nil:
	case *p < lo:
		v.add(field, fmt.Sprintf("must be at least %d, got %d", lo, *p))
	case *p > hi:
		v.add(field, fmt.Sprintf("must be at most %d, got %d", hi, *p))
	}
}

// WaitForAll turns a grace period of +Inf (AIPerf's --benchmark-grace-period
// inf: wait for every request in flight) into MaxSeconds, a value every
// later step (timers, JSON exports, the store) can hold; it is the longest
// grace period allowed anyway.
func (p *Profile) WaitForAll() {
	if x := p.BenchmarkGracePeriod; x != nil && math.IsInf(*x, 1) {
		*x = MaxSeconds
	}
}

// Export levels (AIPerf's --export-level; "" is records).
const (
	ExportSummary = "summary"
	ExportRecords = "records"
	ExportRaw     = "raw" // records, and every request's payloads (profile_export_raw.jsonl)
)

// EventLimit is --max-event-bytes (0: unset, the client's default).
func (p Profile) EventLimit() int { return deref(p.MaxEventBytes, 0) }
