package store_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/store"
)

// referenceStore holds what compare references point at: standalone runs
// named "solo" (one) and "twice" (two), a sweep "scan" of two cells × two
// trials, and two sweeps "one" of a single cell, their trials named "grp".
func referenceStore(tb testing.TB) *store.DB {
	tb.Helper()
	ctx := context.Background()
	db := MustOpenDB(tb)
	save := func(o runOpts) {
		if _, err := db.SaveRun(ctx, newRun(o), ""); err != nil {
			tb.Fatal(err)
		}
	}
	save(runOpts{name: "solo", records: 2})
	save(runOpts{name: "twice", records: 2})
	save(runOpts{name: "twice", records: 2})
	sweep := func(name, runName string, cells ...plan.Cell) {
		id, err := db.BeginSweep(ctx, store.SweepMeta{Name: name, Trials: 2, Cells: cells})
		if err != nil {
			tb.Fatal(err)
		}
		for _, c := range cells {
			for trial := 1; trial <= 2; trial++ {
				save(runOpts{name: runName, records: 2, sweepID: id, cell: &c, trial: trial})
			}
		}
	}
	sweep("scan", "", testCell("scan", 1, 0), testCell("scan", 4, 1))
	sweep("one", "grp", testCell("one", 2, 0))
	sweep("one", "grp", testCell("one", 2, 0))
	return db
}

// FuzzReference resolves arbitrary compare references (`aiperf compare
// REF...` and `--sweep REF`) against a small real store: resolution never
// panics, a reference that resolves has runs the comparison renders, and
// one that does not is an error wrapping ErrNotFound or ErrAmbiguous, the
// two the CLI turns into a usage error (anything else would be reported as
// a store failure).
func FuzzReference(f *testing.F) {
	db := referenceStore(f)
	ctx := context.Background()
	opt := compare.Options{ConfidenceLevel: 0.95}
	clean := func(t *testing.T, what, ref string, err error) {
		if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrAmbiguous) {
			t.Fatalf("%s %q: an error that is neither not-found nor ambiguous: %v", what, ref, err)
		}
	}
	f.Fuzz(func(t *testing.T, ref string) {
		g, err := db.RunsByRef(ctx, ref, opt.StatKeys())
		if err != nil {
			clean(t, "runs", ref, err)
		} else {
			if len(g.Runs) == 0 || g.Ref != ref || g.Desc == "" {
				t.Fatalf("runs %q resolved to %+v", ref, g)
			}
			if err := compare.Render(io.Discard, compare.Groups([]*store.Group{g, g}, opt), compare.FormatTable); err != nil {
				t.Fatalf("compare %q %q: %v", ref, ref, err)
			}
		}
		s, err := db.SweepRuns(ctx, ref, opt.StatKeys())
		if err != nil {
			clean(t, "sweep", ref, err)
		} else {
			if s.Sweep.ID == 0 || len(s.Cells) == 0 {
				t.Fatalf("sweep %q resolved to %+v", ref, s)
			}
			if err := compare.Render(io.Discard, compare.SweepDiff(s, s, opt), compare.FormatJSON); err != nil {
				t.Fatalf("compare --sweep %q --sweep %q: %v", ref, ref, err)
			}
		}
		if _, err := db.ListRuns(ctx, store.RunFilter{Sweep: ref, Name: ref}); err != nil {
			clean(t, "runs list --sweep", ref, err)
		}
	})
}
