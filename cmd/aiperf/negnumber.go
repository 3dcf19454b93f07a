package main

import (
	"reflect"
	"regexp"
	"strings"

	"github.com/alecthomas/kong"
)

// negativeNumber is an argument that starts like a negative number (-4,
// -0.5, -.5, -1e3, -5s, -4,8): never a flag, as no short flag is a digit.
var negativeNumber = regexp.MustCompile(`^-\.?[0-9]`)

// joinNegativeValues gives each number flag followed by a negative number
// (--concurrency -4) that value inline (--concurrency=-4; -i-1 for a short
// flag), as kong takes it: its parser reads "-4" as a short flag, and would
// say "expected int value but got "-4" (short flag)". The value then meets
// the flag's own check, which names the flag and its bound ("--concurrency
// must be at least 1, got -4"). Nothing after "--" is touched.
func joinNegativeValues(app *kong.Application, args []string) []string {
	numeric := numberFlags(app)
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if numeric[a] && i+1 < len(args) && negativeNumber.MatchString(args[i+1]) {
			sep := "="
			if !strings.HasPrefix(a, "--") {
				sep = "" // -i-1: the short flag's tail is its value
			}
			a, i = a+sep+args[i+1], i+1
		}
		out = append(out, a)
	}
	return out
}

// numberFlags are the spellings (--name, an alias, -s) of every flag of the
// command tree whose value is a number (an integer, a float, a duration, a
// list of them).
func numberFlags(app *kong.Application) map[string]bool {
	out := map[string]bool{}
	_ = kong.Visit(app, func(n kong.Visitable, next kong.Next) error {
		f, ok := n.(*kong.Flag)
		if !ok || f.IsBool() || f.IsCounter() || !isNumber(f.Target.Type()) {
			return next(nil)
		}
		out["--"+f.Name] = true
		for _, a := range f.Aliases {
			out["--"+a] = true
		}
		if f.Short != 0 {
			out["-"+string(f.Short)] = true
		}
		return next(nil)
	})
	return out
}

// isNumber reports whether t is a number, a pointer to one or a list of
// them.
func isNumber(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
