package plan

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// flagName is the command-line flag (without dashes) of the field whose JSON
// name is jsonName: snake_case becomes kebab-case.
func flagName(jsonName string) string { return strings.ReplaceAll(jsonName, "_", "-") }

// Option describes one Profile field for the Starlark and YAML loaders.
type Option struct {
	Name  string // JSON (snake_case) name
	Field []int  // index path in Profile (reflect.Value.FieldByIndex)
	Kind  reflect.Type
	Tag   reflect.StructTag
}

// fields lists the fields of struct type t, those of its embedded structs
// (TraceReplay) in their place instead of the embedded struct itself. The
// list is built once per type (a sweep's checks ask for it per cell); the
// caller must not modify it.
func fields(t reflect.Type) []reflect.StructField {
	if v, ok := fieldCache.Load(t); ok {
		return v.([]reflect.StructField)
	}
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if !f.Anonymous {
			out = append(out, f)
		}
	}
	v, _ := fieldCache.LoadOrStore(t, out)
	return v.([]reflect.StructField)
}

// fieldCache maps a reflect.Type to its fields.
var fieldCache sync.Map

// Options lists every settable Profile option by its snake_case name.
func Options() []Option { return options() }

var options = sync.OnceValue(func() []Option {
	fs := fields(reflect.TypeOf(Profile{}))
	out := make([]Option, 0, len(fs))
	for _, f := range fs {
		name := jsonName(f)
		if name == "" || name == "phases" {
			continue
		}
		out = append(out, Option{Name: name, Field: f.Index, Kind: f.Type, Tag: f.Tag})
	}
	return out
})

// LookupOption finds an option by its snake_case name or by the snake_case
// form of one of its flag aliases (isl, osl, num_requests, ...).
func LookupOption(name string) (Option, bool) {
	o, ok := optionIndex()[name]
	return o, ok
}

var optionIndex = sync.OnceValue(func() map[string]Option {
	out := map[string]Option{}
	for _, o := range Options() {
		out[o.Name] = o
		for a := range strings.SplitSeq(o.Tag.Get("aliases"), ",") {
			if a != "" {
				out[strings.ReplaceAll(a, "-", "_")] = o
			}
		}
	}
	return out
})

// Set assigns value to the option, converting between compatible Go types:
// int to float, a single string to a list, a value to a pointer. It returns a
// message naming the expected type when value does not fit.
func (o Option) Set(p *Profile, value any) error {
	f := reflect.ValueOf(p).Elem().FieldByIndex(o.Field)
	return assign(f, value)
}

// Get returns the option's current value (pointers dereferenced, nil if unset).
func (o Option) Get(p *Profile) any {
	f := reflect.ValueOf(p).Elem().FieldByIndex(o.Field)
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			return nil
		}
		f = f.Elem()
	}
	return f.Interface()
}

// TypeName names the option's type for error messages: "int", "float",
// "string", "bool" or "list of strings".
func (o Option) TypeName() string { return typeName(o.Kind) }

// Overlay copies the named options (snake_case) from src into p: explicit
// CLI flags override YAML. When p lists its phases (from YAML), an explicit
// load flag (concurrency, request_rate, request_rate_mode, arrival_smoothness, request_count,
// benchmark_duration, benchmark_grace_period) also goes to the list's only
// profiling phase, as in AIPerf. It is refused, with a *FieldError, when the
// list has several profiling phases; the warmup flags never rewrite a phase
// list and are refused too.
func (p *Profile) Overlay(src *Profile, names []string) error {
	dst := reflect.ValueOf(p).Elem()
	from := reflect.ValueOf(src).Elem()
	for _, n := range names {
		if o, ok := LookupOption(n); ok {
			dst.FieldByIndex(o.Field).Set(from.FieldByIndex(o.Field))
		}
	}
	if len(p.Phases) == 0 {
		return nil
	}
	return p.overlayPhases(names)
}

// overlayPhases applies the explicit load flags among names to the only
// profiling phase of p.Phases (see Overlay).
func (p *Profile) overlayPhases(names []string) error {
	phases := slices.Clone(p.Phases)
	var prof *Phase
	profiling := 0
	for i := range phases {
		if phases[i].Kind == KindProfiling {
			profiling++
			prof = &phases[i]
		}
	}
	var errs []error
	for _, n := range names {
		o, ok := LookupOption(n)
		if !ok {
			continue
		}
		switch o.Name {
		case "warmup_request_count", "warmup_duration", "num_warmup_sessions", "warmup_concurrency", "warmup_request_rate",
			"warmup_arrival_pattern", "warmup_grace_period":
			errs = append(errs, &FieldError{Field: o.Name,
				Msg: "cannot change the phases the config file lists: edit its warmup phase instead"})
			continue
		case "concurrency", "request_rate", "request_rate_mode", "arrival_smoothness", "request_count", "benchmark_duration",
			"benchmark_grace_period":
		default:
			continue
		}
		if profiling != 1 {
			errs = append(errs, &FieldError{Field: o.Name, Msg: fmt.Sprintf(
				"cannot be applied: the config file lists %d profiling phases; set it on a phase in the file", profiling)})
			continue
		}
		switch o.Name {
		case "concurrency":
			prof.Concurrency = deref(p.Concurrency, 0)
		case "request_rate":
			prof.Rate = deref(p.RequestRate, 0)
			prof.RateMode = cmp.Or(prof.RateMode, p.ArrivalPattern())
			prof.Smoothness = p.smoothness(prof.RateMode)
		case "request_rate_mode", "arrival_smoothness":
			prof.RateMode = p.ArrivalPattern()
			prof.Smoothness = p.smoothness(prof.RateMode)
		case "request_count":
			prof.Requests = deref(p.RequestCount, 0)
		case "benchmark_duration":
			if prof.Duration == 0 && !slices.Contains(names, "benchmark_grace_period") {
				prof.GracePeriod = DefaultGracePeriod // as the YAML loader does for a phase with a duration
			}
			prof.Duration = deref(p.BenchmarkDuration, 0)
		case "benchmark_grace_period":
			prof.GracePeriod = deref(p.BenchmarkGracePeriod, 0)
		}
	}
	p.Phases = phases
	return errors.Join(errs...)
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" {
		return ""
	}
	return name
}
