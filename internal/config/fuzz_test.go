package config

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// FuzzConfig: any bytes either load, or are refused with errors that each
// carry the file and a line; a loaded file never makes Check panic, and a
// file that passes Check holds no number the JSON export cannot encode. The
// seed corpus is testdata/fuzz/FuzzConfig/; `go test` runs it.
func FuzzConfig(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.yaml", data)
		if err != nil {
			if file != nil {
				t.Fatalf("error %v with a result", err)
			}
			for _, e := range leaves(err) {
				var ce *Error
				if !errors.As(e, &ce) || ce.File != "fuzz.yaml" || ce.Line < 1 {
					t.Fatalf("error without a line: %v", e)
				}
			}
			return
		}
		if err := file.Profile.Check(); err != nil {
			if len(plan.FieldErrors(err)) == 0 {
				t.Fatalf("Check error without a field: %v", err)
			}
			return
		}
		if _, err := json.Marshal(file.Profile); err != nil {
			t.Fatalf("a checked profile does not encode: %v", err)
		}
	})
}

// leaves unpacks errors.Join trees.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}
