package starlark_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/starlark"
)

// fuzzFiles surround the fuzzed sweeps.star: a module it may load, and
// files it must not be able to read.
var fuzzFiles = map[string]string{
	"lib/common.star": `
def chat(**kw):
    return profile(model = "m", url = "http://127.0.0.1:8000", endpoint_type = "chat", streaming = True).replace(**kw)
LEVELS = [1, 2, 4]
`,
	"lib/notes.txt":   "FUZZSECRET in a text file\n",
	"../up.star":      "x = 'FUZZSECRET above the script'\n",
	"/abs/other.star": "x = 'FUZZSECRET elsewhere'\n",
}

// position is file:line:col.
var position = regexp.MustCompile(`^[^\s:]+:\d+:\d+$`)

// FuzzLoad runs arbitrary script text through the loader and the plan
// expansion: it never panics or runs away (the step and trial limits
// apply), every error is a positioned *Error, no error shows a file it
// may not read, and every plan it accepts has valid, distinct directories.
func FuzzLoad(f *testing.F) {
	const maxTrials = 500
	f.Fuzz(func(t *testing.T, src string) {
		files := map[string]string{"sweeps.star": src}
		for k, v := range fuzzFiles {
			files[k] = v
		}
		sweeps, err := starlark.Load(context.Background(), "sweeps.star", starlark.Options{
			ReadFile:  memFS(files),
			MaxSteps:  100_000,
			MaxTrials: maxTrials,
			Print:     func(string) {},
		})
		if err != nil {
			checkFuzzError(t, src, err)
			return
		}
		total := 0
		for _, s := range sweeps {
			total += len(s.TrialList())
			seen := map[string]bool{}
			for _, tr := range s.TrialList() {
				dir := strings.ToLower(tr.Dir())
				for _, part := range strings.Split(dir, "/") {
					if part == "" || part == "." || part == ".." || len(part) > plan.MaxNameBytes {
						t.Fatalf("bad directory %q", tr.Dir())
					}
				}
				if seen[dir] {
					t.Fatalf("two trials share %s", tr.Dir())
				}
				seen[dir] = true
			}
		}
		if total > maxTrials {
			t.Fatalf("%d trials planned, over the limit of %d", total, maxTrials)
		}
	})
}

// checkFuzzError checks the error of a fuzzed script.
func checkFuzzError(t *testing.T, src string, err error) {
	t.Helper()
	if strings.Contains(err.Error(), "FUZZSECRET") && !strings.Contains(src, "FUZZSECRET") {
		t.Fatalf("an error shows a file load() may not read: %v", err)
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var se *starlark.Error
		if !errors.As(e, &se) {
			t.Fatalf("not a script error: %v", e)
		}
		if !position.MatchString(se.Pos) {
			t.Fatalf("error without a position: %q in %v", se.Pos, se)
		}
	}
}
