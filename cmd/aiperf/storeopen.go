package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/starter"
	"github.com/aiperf-go/aiperf/store"
)

// What to do about a store that cannot be used, by command.
const (
	otherStore        = "--store PATH or AIPERF_STORE picks another file"
	otherStoreOrNone  = "nothing was sent; " + otherStore + ", --no-store records nothing"
	otherStoreNothing = "nothing was sent; " + otherStore
)

// checkStoreFlags settles the store of the command line kctx parsed, before
// anything runs: an AIPERF_STORE that is set but empty is taken as unset
// (the default store); an empty --store, an in-memory database (whose runs
// would be lost on exit) and an SQLite URI are usage errors, unless
// profile's --no-store leaves the store unused.
func checkStoreFlags(kctx *kong.Context, g *Globals, noStore bool) error {
	given := false // on the command line, not from AIPERF_STORE or the default
	for _, p := range kctx.Path {
		given = given || p.Flag != nil && p.Flag.Name == "store"
	}
	g.bareStore = os.Getenv("AIPERF_STORE")
	if strings.TrimSpace(g.bareStore) == "" {
		for _, f := range kctx.Flags() {
			if f.Name == "store" {
				g.bareStore = f.Default
			}
		}
	}
	if !given && strings.TrimSpace(g.Store) == "" {
		g.Store = g.bareStore
	}
	if cmd, _, _ := strings.Cut(kctx.Command(), " "); noStoreCommands[cmd] {
		return nil
	}
	if noStore { // --store with it is not refused: the e2e helpers (cliRun) give --store to every command
		return nil
	}
	field := "AIPERF_STORE"
	if given {
		field = "--store"
	}
	path := g.Store
	switch {
	case strings.TrimSpace(path) == "":
		return usageErr(fmt.Errorf("%s is empty: give the path of the store file (the default is artifacts/aiperf.db), "+
			"or --no-store to record nothing", field))
	case path == ":memory:" || strings.HasPrefix(path, "file::memory:"):
		return usageErr(fmt.Errorf("%s %s is an in-memory database, whose runs would be lost when aiperf exits: "+
			"give the path of a store file, or --no-store to record nothing", field, path))
	case strings.HasPrefix(path, "file:"):
		return usageErr(fmt.Errorf("%s %s is an SQLite URI: give the path of the store file (%s)", field, path,
			strings.TrimPrefix(strings.SplitN(path, "?", 2)[0], "file:")))
	}
	return nil
}

// noStoreCommands never open the store: they take any --store.
var noStoreCommands = map[string]bool{"plan": true, "config": true, "analyze-trace": true, "synthesize-trace": true,
	"mock-server": true, "version": true, "worker": true}

// openStoreToWrite opens the store for writing before anything is sent: a store
// that could not record the result is a usage error (exit 2) saying what to
// do instead. A Ctrl-C while it waits for another process's lock ends the
// wait (exit 130).
func openStoreToWrite(ctx context.Context, path, instead string) (*store.DB, error) {
	db, err := store.OpenContext(ctx, path)
	if errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("%w; nothing was sent or changed", err)
	}
	return db, storeErr(err, instead)
}

// storedLine is the line naming the run id that profile stored in g.Store
// and the command that shows it: with --store, on a line of its own, when
// the store is not the one that command would open by itself (AIPERF_STORE,
// else the default), so following it shows this run, not another store's
// run of the same id.
func storedLine(g *Globals, id int64) string {
	if g.Store != g.bareStore { // the command on a line of its own: the path twice on one would not fit 120 columns
		return fmt.Sprintf("Stored: run %d in %s\n  aiperf runs show %d --store %s\n", id, g.Store, id, starter.ShellQuote(g.Store))
	}
	return fmt.Sprintf("Stored: run %d in %s (aiperf runs show %d)\n", id, g.Store, id)
}

// openExistingStore opens an existing store for writing (`runs delete`);
// unlike store.Open it does not create an empty database where none was
// recorded.
func openExistingStore(ctx context.Context, path string) (*store.DB, error) {
	if err := storeExists(path); err != nil {
		return nil, err
	}
	return openStoreToWrite(ctx, path, otherStore)
}

// openStoreToRead opens an existing store for reading only (`runs list`,
// `show`, `export`, `compare`), which also works on a read-only file or
// directory, and on a full disk.
func openStoreToRead(ctx context.Context, path string) (*store.DB, error) {
	if err := storeExists(path); err != nil {
		return nil, err
	}
	db, err := store.OpenReadOnlyContext(ctx, path)
	return db, storeErr(err, otherStore)
}

func storeExists(path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		where := ""
		if wd, err := os.Getwd(); err == nil && !filepath.IsAbs(path) {
			where = " (relative to this directory, " + wd + ")"
		}
		return usageErr(fmt.Errorf("no run store at %s%s: runs are recorded by aiperf profile and aiperf sweep "+
			"(--store or AIPERF_STORE picks another file)", path, where))
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
