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
	c.Exports = redactEach(c.Exports, func(e *Export) bool {
		a, b := redactInto(rd, &e.Target), redactInto(rd, &e.Detail)
		return a || b
	})
	c.Records = redactEach(c.Records, func(rec *metrics.Record) bool {
		raw := redactRaw(rd, rec)
		if t := rec.ResponseText; t != nil {
			if s := rd.Redact(*t); s != *t {
				// The reply's text held a secret: whether some copy of it was
				// split over chunks, where no one chunk shows it, cannot be told
				// from the chunks (a field beside the content may hold another
				// whole), so no chunk is kept.
				rec.ResponseText, raw = &s, true
				blankResponses(rec)
			}
		}
		if rec.Error == nil {
			return raw
		}
		msg := rd.Redact(rec.Error.Message)
		if msg == rec.Error.Message {
			return raw
		}
		e := *rec.Error // shared with the original run: copy before changing
		e.Message = msg
		rec.Error = &e
		return true
	})
	return &c
}

// redactRaw redacts the payload and responses of rec's raw exchange
// (--export-level raw): a server may echo a key in its body. It copies the
// exchange when it changes something and reports whether it did.
func redactRaw(rd *plan.Redactor, rec *metrics.Record) bool {
	if rec.Raw == nil {
		return false
	}
	var out *metrics.Raw
	fix := func() *metrics.Raw {
		if out == nil {
			out = &metrics.Raw{Payload: rec.Raw.Payload, Responses: slices.Clone(rec.Raw.Responses)}
		}
		return out
	}
	if s := rd.Redact(string(rec.Raw.Payload)); s != string(rec.Raw.Payload) {
		fix().Payload = []byte(s)
	}
	for i, x := range rec.Raw.Responses {
		if s := rd.Redact(string(x.Data)); s != string(x.Data) {
			fix().Responses[i].Data = []byte(s)
		}
		if s := rd.Redact(x.Event); s != x.Event {
			fix().Responses[i].Event = s
		}
	}
	if out == nil {
		return false
	}
	rec.Raw = out
	return true
}

// blankResponses replaces the data of every response of rec's raw
// exchange by Redacted.
func blankResponses(rec *metrics.Record) {
	if rec.Raw == nil {
		return
	}
	out := &metrics.Raw{Payload: rec.Raw.Payload, Responses: slices.Clone(rec.Raw.Responses)}
	for i := range out.Responses {
		out.Responses[i].Data = []byte(plan.Redacted)
	}
	rec.Raw = out
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
