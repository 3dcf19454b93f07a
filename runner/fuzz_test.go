package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// FuzzReadSpec decodes arbitrary trial spec files: ReadSpec never panics,
// fails with "decode trial spec <path>: ...", and what a trial child does
// next with a decoded spec (validate it, redact it, resolve its hooks and
// origins, and the parent's encoding of it) never panics either.
func FuzzReadSpec(f *testing.F) {
	path := filepath.Join(f.TempDir(), runner.SpecFile)
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := runner.TakeSpec(writeFuzz(t, path, data))
		if cleanError(t, err, "decode trial spec "+path+": ") {
			return
		}
		if _, err := json.Marshal(spec); err != nil {
			t.Fatalf("a decoded spec does not encode: %v", err)
		}
		if err := spec.Profile.Check(); err != nil {
			return
		}
		_ = spec.Profile.Redacted()
		_ = spec.Profile.ResetHook()
		_ = spec.Profile.ProfilerHook()
		_ = spec.Profile.Origins()
		_ = spec.Profile.RequestURLs()
		_ = spec.Profile.PhaseList()
	})
}

// launched hands the sweep runner one decoded result.
type launched struct{ run *result.Run }

func (l launched) Launch(context.Context, runner.Spec, string) (*result.Run, error) {
	return l.run, nil
}

// FuzzReadResult decodes arbitrary trial result files: ReadResult never
// panics and fails with "decode trial result <path>: ...", and the sweep
// runner takes any decoded result through what it does with a child's
// (store it in a real store, summarise it, aggregate its cell) without
// panicking.
func FuzzReadResult(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, runner.ResultFile)
	db, err := store.Open(":memory:")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	sw := testSweep(1, 0, 2)
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := runner.ReadResult(writeFuzz(t, path, data))
		if cleanError(t, err, "decode trial result "+path+": ") {
			return
		}
		ctx := context.Background()
		id, err := db.BeginSweep(ctx, store.SweepMeta{Name: sw.Name, Cells: sw.Cells})
		if err != nil {
			t.Fatal(err)
		}
		_, err = runner.Run(ctx, sw, runner.Options{
			Executor:   launched{run},
			Store:      db,
			SweepID:    id,
			TrialDir:   func(plan.Trial) string { return filepath.Join(dir, "trial") },
			CellDir:    func(plan.Cell) string { return filepath.Join(dir, "cell") },
			Confidence: 0.95,
			Progress:   io.Discard,
		})
		if err != nil && !errors.Is(err, runner.ErrTrialsFailed) && !errors.Is(err, context.Canceled) {
			t.Fatalf("a decoded result the store refuses stops the sweep: %v", err)
		}
		runs, err := db.ListRuns(ctx, store.RunFilter{Sweep: sw.Name})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if err := db.DeleteRuns(ctx, r.ID); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// writeFuzz writes a fuzz input to path and returns path.
func writeFuzz(t *testing.T, path string, data []byte) string {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// cleanError reports whether there was an error, failing t when its message
// does not start with prefix (which names the file).
func cleanError(t *testing.T, err error, prefix string) bool {
	if err != nil && !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("unclear error: %v", err)
	}
	return err != nil
}
