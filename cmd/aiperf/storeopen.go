package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// What to do about a store that cannot be used, by command.
const (
	otherStore        = "--store PATH or AIPERF_STORE picks another file"
	otherStoreOrNone  = "nothing was sent; " + otherStore + ", --no-store records nothing"
	otherStoreNothing = "nothing was sent; " + otherStore
)

// openStoreToWrite opens the store for writing before anything is sent: a store
// that could not record the result is a usage error (exit 2) saying what to
// do instead.
func openStoreToWrite(path, instead string) (*store.DB, error) {
	db, err := store.Open(path)
	return db, storeErr(err, instead)
}

// openExistingStore opens an existing store for writing (`runs delete`);
// unlike store.Open it does not create an empty database where none was
// recorded.
func openExistingStore(path string) (*store.DB, error) {
	if err := storeExists(path); err != nil {
		return nil, err
	}
	return openStoreToWrite(path, otherStore)
}

// openStoreToRead opens an existing store for reading only (`runs list`,
// `show`, `export`, `compare`), which also works on a read-only file or
// directory.
func openStoreToRead(path string) (*store.DB, error) {
	if err := storeExists(path); err != nil {
		return nil, err
	}
	db, err := store.OpenReadOnly(path)
	return db, storeErr(err, otherStore)
}

func storeExists(path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return usageErr(fmt.Errorf("no run store at %s: runs are recorded by aiperf profile and aiperf sweep "+
			"(--store or AIPERF_STORE picks another file)", path))
	}
	return nil
}

// storeErr turns a store the user must replace or repair into a usage
// error; other errors pass unchanged.
func storeErr(err error, instead string) error {
	var ue *store.UnusableError
	if errors.As(err, &ue) {
		return usageErr(fmt.Errorf("%w; %s", err, instead))
	}
	return err
}

// completeRun stores the finished run over its pending row, waiting out a
// transient failure (db.Retry); its error says what is in the store and
// where the exports are.
func completeRun(ctx context.Context, g *Globals, pending *store.Pending, run *result.Run, dir string, exported bool) (int64, error) {
	id, err := pending.Complete(ctx, run, dir)
	if err == nil {
		return id, nil
	}
	kept := "the run is not stored"
	if id, n := pending.Stored(); id != 0 {
		kept = fmt.Sprintf("the run is not stored complete: run %d stays in the store as an interrupted run with the %d records stored while it went", id, n)
	}
	where := "no exports were written"
	if exported {
		where = "its exports are in " + dir
	}
	return 0, fmt.Errorf("save run to store %s: %w; %s, %s", g.Store, err, kept, where)
}

// retryOn is how a command that stores runs waits out a transient store
// failure (a disk full for a moment), saying so on log.
func retryOn(log io.Writer) store.Retry {
	r := store.DefaultRetry
	r.Log = log
	return r
}
