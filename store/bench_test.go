package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/aiperf-go/aiperf/store"
)

// BenchmarkSaveRun stores a run of 1,000 records (with its statistics,
// control-hook calls and error summary) per iteration, in a WAL file.
func BenchmarkSaveRun(b *testing.B) {
	db := openAt(b, filepath.Join(b.TempDir(), "aiperf.db"))
	r := newRun(runOpts{name: "bench", records: 1000})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.SaveRun(ctx, r, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetRunWithRecords reads back a 1,000-record run.
func BenchmarkGetRunWithRecords(b *testing.B) {
	db := openAt(b, filepath.Join(b.TempDir(), "aiperf.db"))
	ctx := context.Background()
	id, err := db.SaveRun(ctx, newRun(runOpts{name: "bench", records: 1000}), "")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.GetRun(ctx, id, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen opens and closes an existing store of 200 runs of 1,000
// records: what every aiperf command pays before it starts.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "aiperf.db")
	db := openAt(b, path)
	r := newRun(runOpts{name: "bench", records: 1000})
	for range 200 {
		if _, err := db.SaveRun(context.Background(), r, ""); err != nil {
			b.Fatal(err)
		}
	}
	db.Close()
	for b.Loop() {
		db, err := store.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

// BenchmarkSaveRun100k stores a run of 100,000 records per iteration: the
// per-record cost of a large run's post-run work.
func BenchmarkSaveRun100k(b *testing.B) {
	db := openAt(b, filepath.Join(b.TempDir(), "aiperf.db"))
	r := newRun(runOpts{name: "bench", records: 100000})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.SaveRun(ctx, r, ""); err != nil {
			b.Fatal(err)
		}
	}
}
