package result

import (
	"slices"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// Redacted returns r with its configuration redacted and every secret rd
// knows replaced in the free text a server or an error may have echoed: the
// command line, the run's error, every record's and error summary's message,
// control-hook errors and warnings, and audit warnings. It copies only what
// it changes, so a clean run costs a scan and no allocation.
func (r *Run) Redacted(rd *plan.Redactor) *Run {
	c := *r
	c.Config = r.Config.Redacted()
	if rd.Empty() {
		return &c
	}
	c.CLICommand, c.Error = rd.Redact(c.CLICommand), rd.Redact(c.Error)
	c.ErrorSummary = redactEach(c.ErrorSummary, func(e *metrics.ErrorCount) bool {
		return redactInto(rd, &e.Error.Message)
	})
	c.ControlHooks = redactEach(c.ControlHooks, func(call *hooks.Call) bool {
		a, b := redactInto(rd, &call.Error), redactInto(rd, &call.Warning)
		return a || b
	})
	c.Audit.Warnings = redactEach(c.Audit.Warnings, func(w *string) bool { return redactInto(rd, w) })
	c.Audit.KVResetDetail = rd.Redact(c.Audit.KVResetDetail)
	c.Records = redactEach(c.Records, func(rec *metrics.Record) bool {
		if rec.Error == nil {
			return false
		}
		msg := rd.Redact(rec.Error.Message)
		if msg == rec.Error.Message {
			return false
		}
		e := *rec.Error // shared with the original run: copy before changing
		e.Message = msg
		rec.Error = &e
		return true
	})
	return &c
}

// redactEach applies redact to a copy of each element and returns xs, or a
// new slice holding the changed copies when any changed.
func redactEach[T any](xs []T, redact func(*T) bool) []T {
	var out []T
	for i := range xs {
		x := xs[i]
		if !redact(&x) {
			continue
		}
		if out == nil {
			out = slices.Clone(xs)
		}
		out[i] = x
	}
	if out == nil {
		return xs
	}
	return out
}

// redactInto redacts *s in place and reports whether it changed.
func redactInto(rd *plan.Redactor, s *string) bool {
	red := rd.Redact(*s)
	if red == *s {
		return false
	}
	*s = red
	return true
}
