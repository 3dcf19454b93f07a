package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
)

//go:embed migration/*.sql
var migrationFS embed.FS

// firstMigration is the migration every aiperf store has applied.
const firstMigration = "migration/0001_init.sql"

// dsnOptions are the connection settings measured in deps.md §2: WAL with
// synchronous=NORMAL, a 30 s busy timeout and BEGIN IMMEDIATE transactions,
// which together let several processes write one file without "database is
// locked" errors.
const dsnOptions = "_journal_mode=WAL&_busy_timeout=30000&_synchronous=NORMAL&_txlock=immediate&_foreign_keys=on"

// readonlyDirectory is SQLITE_READONLY_DIRECTORY: the database cannot be
// written because SQLite cannot create its journal files beside it.
var readonlyDirectory = sqlite3.ErrReadonly.Extend(6)

// readOnlyOptions open an existing file for reading only (a file: URI).
const readOnlyOptions = "mode=ro&_busy_timeout=30000&_foreign_keys=on"

// readerOptions open a store the process may write for reading only: the
// file is opened read-write, so that the last connection removes the -wal
// and -shm files on close (a mode=ro connection cannot, and leaves them
// behind), and query_only refuses every write through it.
const readerOptions = "mode=rw&_query_only=true&_busy_timeout=30000&_foreign_keys=on"

// UnusableError is what Open and OpenReadOnly return for a store they
// refuse before reading or writing any run: a directory, a file that is not
// an aiperf store, a damaged database, a read-only one where writing is
// needed, or one written by a newer aiperf. Its message names the path, the
// problem and, where there is one, the remedy.
type UnusableError struct {
	Path   string
	Reason string // e.g. "is not an SQLite database (file is not a database)"
	Err    error  // the underlying error, if any
}

func (e *UnusableError) Error() string { return "store " + e.Path + " " + e.Reason }

// Unwrap returns the underlying error.
func (e *UnusableError) Unwrap() error { return e.Err }

// Open opens the store at path for reading and writing, creating the file
// and its parent directories if needed and applying pending migrations. It
// then makes one write it rolls back, so a store that could not record a
// run is refused now, not after a benchmark: every such refusal is an
// *UnusableError. The path ":memory:" opens a private in-memory database;
// any other path is a file name, taken as it is ("a?b.db", "file:x.db" are
// files of those names, as OpenReadOnly reads them), and may not be empty.
//
// Open reads the database header and schema but not every page: damage deep
// inside a large file is found by IntegrityCheck, which reads them all.
func Open(path string) (*DB, error) { return OpenContext(context.Background(), path) }

// OpenContext is Open whose wait for another process's lock on the store
// (up to the 30 s busy timeout) ends at once when ctx is cancelled, with an
// error that wraps ctx's cause (context.Canceled for a Ctrl-C), not an
// *UnusableError: nothing was written.
func OpenContext(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("open store: the path is empty")
	}
	if path != ":memory:" {
		if err := checkFile(path, true); err != nil {
			return nil, err
		}
		if err := refuseReadOnlyFile(path); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, noDirectory(path, err)
		}
	}
	dsn := ":memory:?" + dsnOptions
	if path != ":memory:" {
		dsn = fileURI(path, dsnOptions)
	}
	sqlDB, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w", path, err)
	}
	if path == ":memory:" {
		// Every connection to :memory: is a different database.
		sqlDB.SetMaxOpenConns(1)
	}
	db := &DB{db: sqlDB, path: path, Now: time.Now}
	// Two processes creating one store at once: the one that comes second
	// may find it locked where SQLite does not wait (switching a new file
	// to WAL, upgrading a read to a write); it tries again.
	for start := time.Now(); ; {
		err = db.prepare(ctx)
		if err == nil || !busy(err) || time.Since(start) > busyTimeout || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	if err != nil {
		sqlDB.Close()
		return nil, err
	}
	return db, nil
}

// noDirectory is the refusal of a store at path whose directory could not
// be made (err, MkdirAll's): a file stands in its way, or a parent may not
// be written.
func noDirectory(path string, err error) *UnusableError {
	dir, cause := filepath.Dir(path), err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		dir, cause = pe.Path, pe.Err
	}
	return &UnusableError{Path: path, Err: err, Reason: fmt.Sprintf(
		"cannot be created: its directory %s cannot be made (%v): give a path in a directory that exists or can be made", dir, cause)}
}

// refuseReadOnlyFile refuses an existing store file the process may not
// write before SQLite opens it: opened read-write, SQLite falls back to
// reading it and creates its -wal and -shm files, owned by this user, which
// it cannot remove on close (a read-only connection never does); left
// behind, they lock the store's owner out. The refusal is the one the
// write probe would have made (unusable), with nothing created.
func refuseReadOnlyFile(path string) error {
	if _, err := os.Stat(path); err != nil || !accessKnown || writableFile(path) {
		return nil
	}
	return (&DB{path: path}).unusable(sqlite3.Error{Code: sqlite3.ErrReadonly})
}

// fileURI is the SQLite URI of the file path with the query opts: the
// characters a URI gives a meaning to are escaped, so that every path names
// the file it spells.
func fileURI(path, opts string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	if filepath.IsAbs(path) {
		return "file://" + esc + "?" + opts // "file:///a" is /a; "file://a" would be host a
	}
	return "file:" + esc + "?" + opts
}

// busyTimeout is how long opening waits out another process's lock, as
// _busy_timeout does for statements.
const busyTimeout = 30 * time.Second

// busy reports whether err is SQLite's "database is locked".
func busy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// prepare checks that db holds an aiperf store this binary understands,
// applies pending migrations, checks that it has every table and column
// they create and proves that it can write. A failure once
// ctx is cancelled is the interruption's, not the store's: it wraps ctx's
// cause and is no *UnusableError.
func (db *DB) prepare(ctx context.Context) error {
	fail := func(err error) error {
		switch {
		case ctx.Err() == nil:
			return db.unusable(err)
		case errors.Is(err, context.Cause(ctx)):
			return fmt.Errorf("open store %q: %w", db.path, err)
		}
		return fmt.Errorf("open store %q: interrupted (%w): %w", db.path, context.Cause(ctx), err)
	}
	applied, err := db.appliedMigrations(ctx)
	if err != nil {
		return fail(err)
	}
	pending, err := db.pending(applied)
	if err != nil {
		return err
	}
	if err := db.migrate(ctx, pending); err != nil {
		return fail(err)
	}
	if err := db.checkSchema(ctx); err != nil {
		return fail(err)
	}
	if err := db.probeWrite(ctx); err != nil {
		return fail(err)
	}
	return nil
}

// OpenReadOnly opens an existing store for reading: `aiperf runs list`,
// `show`, `export` and `compare` work on a store the user may not write, in
// a directory SQLite cannot create its -shm and -wal files in, and on a
// full disk. A store with pending migrations is opened with Open instead,
// to apply them; when it cannot be written that is an *UnusableError.
func OpenReadOnly(path string) (*DB, error) { return OpenReadOnlyContext(context.Background(), path) }

// OpenReadOnlyContext is OpenReadOnly whose wait for a lock (when it
// upgrades an older store) ends when ctx is cancelled, as OpenContext's.
func OpenReadOnlyContext(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("open store: the path is empty")
	}
	if err := checkFile(path, false); err != nil {
		return nil, err
	}
	// A process that may not write the store reads it as immutable when no
	// write-ahead log is there: read-only SQLite would create the -wal and
	// -shm files, owned by this user, and leave them behind to lock the
	// store's owner out. So does one on a full disk, where SQLite would
	// create them and fail to fill the -shm (and leave both behind).
	w := writable(path)
	emptyWAL := walEmpty(path)
	full := noRoom(filepath.Dir(path))
	snapshot := emptyWAL && (accessKnown && !w || full)
	db, applied, err := openReadOnly(ctx, path, snapshot)
	if se := (sqlite3.Error{}); snapshot && errors.As(err, &se) && se.Code == sqlite3.ErrCorrupt {
		// written meanwhile, and read without locks: read it with them
		db, applied, err = openReadOnly(ctx, path, false)
		snapshot = false
	}
	if err == nil && w && !snapshot {
		db.db.Close()
		db, applied, err = openReader(ctx, path, readerOptions)
	}
	if se := (sqlite3.Error{}); errors.As(err, &se) && (se.Code == sqlite3.ErrReadonly || se.Code == sqlite3.ErrCantOpen ||
		diskFull(se) && walEmpty(path)) {
		// A WAL database needs its -shm file; in a read-only directory
		// SQLite cannot create it, on a full disk it cannot fill it. Nobody
		// can write there either, so the file may be read as immutable
		// (an empty -wal holds nothing it would miss).
		db, applied, err = openReadOnly(ctx, path, true)
	}
	if err != nil {
		return nil, err
	}
	pending, err := db.pending(applied)
	if err != nil {
		db.db.Close()
		return nil, err
	}
	if len(pending) == 0 {
		return db, nil
	}
	db.db.Close()
	rw, err := OpenContext(ctx, path)
	var ue *UnusableError
	if errors.As(err, &ue) && !strings.HasPrefix(ue.Reason, damagedReason) { // damage is said as it is
		return nil, &UnusableError{Path: path, Err: err, Reason: fmt.Sprintf(
			"has schema %d and this aiperf needs schema %d, but it cannot be upgraded: %s",
			schemaVersion(applied), schemaVersion(embedded()), ue.Reason)}
	}
	return rw, err
}

// walEmpty reports whether the store at path has no write-ahead log, or
// an empty one: the database file alone holds every committed write.
func walEmpty(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0
}

// minRoom is the free space below which a read does not let SQLite create
// the -wal and -shm files (the -shm alone takes 32 KiB).
const minRoom = 256 << 10

// openReadOnly opens path read-only (immutable: without its WAL) and reads
// its applied migrations.
func openReadOnly(ctx context.Context, path string, immutable bool) (*DB, []string, error) {
	opts := readOnlyOptions
	if immutable {
		opts += "&immutable=1"
	}
	return openReader(ctx, path, opts)
}

// openReader opens path with opts and reads its applied migrations.
func openReader(ctx context.Context, path, opts string) (*DB, []string, error) {
	sqlDB, err := sql.Open("sqlite3", fileURI(path, opts))
	if err != nil {
		return nil, nil, fmt.Errorf("open store %q: %w", path, err)
	}
	db := &DB{db: sqlDB, path: path, Now: time.Now}
	applied, err := db.appliedMigrations(ctx)
	if err != nil {
		sqlDB.Close()
		if ctx.Err() != nil { // a Ctrl-C, not a store that cannot be read
			return nil, nil, fmt.Errorf("open store %q: %w", path, ctx.Err())
		}
		return nil, nil, db.unusable(err)
	}
	return db, applied, nil
}

// checkFile refuses a path that exists but is not a regular file, and a
// missing one unless it may be created.
func checkFile(path string, create bool) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil && create:
		return nil // created, or refused with the reason, by the next steps
	case errors.Is(err, fs.ErrNotExist):
		return &UnusableError{Path: path, Reason: "does not exist", Err: err}
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return &UnusableError{Path: path, Reason: fmt.Sprintf("cannot be opened (%v)", pe.Err), Err: err}
		}
		return &UnusableError{Path: path, Reason: fmt.Sprintf("cannot be opened (%v)", err), Err: err}
	case fi.IsDir():
		return &UnusableError{Path: path, Reason: fmt.Sprintf(
			"is a directory, not a database file: give a file path such as %s", filepath.Join(path, "aiperf.db"))}
	case !fi.Mode().IsRegular():
		return &UnusableError{Path: path, Reason: "is not a regular file"}
	}
	return nil
}

// probeWrite writes a row into each table a run is stored in (migrations,
// runs, run_stats, records) and rolls them back. In WAL mode SQLite opens a
// read-only file without complaint and even begins a write transaction on
// it; only the first page written fails. And a damaged table (its root page
// overwritten) is found only when a row goes into it: here, before any
// traffic, not when the run is saved. A row refused by a constraint or a
// trigger of the store's says nothing about the file and is let be.
func (db *DB) probeWrite(ctx context.Context) error {
	err := db.inTxInterruptible(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (name, applied_at) VALUES ('write probe', '')`); err != nil {
			return err
		}
		var next int64 // reads the runs table's root and last pages
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM runs`).Scan(&next); err != nil {
			return fmt.Errorf("table runs: %w", err)
		}
		// the probe's records need no run row: the check waits for a commit that never comes
		if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
			return err
		}
		for _, probe := range []struct{ table, insert string }{
			{"runs", `INSERT INTO runs (id, name, status, started_at, ended_at) VALUES (?1, 'write probe', 'interrupted', '', '')`},
			{"run_stats", `INSERT INTO run_stats (run_id, phase, metric, stat, value) VALUES (?1, 'probe', 'probe', 'probe', 0)`},
			{"records", `INSERT INTO records (run_id, idx, phase, phase_kind, scheduled_ns, sent_ns, end_ns) VALUES (?1, 0, '', '', 0, 0, 0)`},
		} {
			var se sqlite3.Error
			if _, err := tx.ExecContext(ctx, probe.insert, next); err != nil && !(errors.As(err, &se) && se.Code == sqlite3.ErrConstraint) {
				return fmt.Errorf("table %s: %w", probe.table, err)
			}
		}
		return errProbed
	})
	if errors.Is(err, errProbed) {
		return nil
	}
	return err
}

// unusable turns an SQLite error about the file itself into an
// *UnusableError that says what to do; other errors are wrapped with the
// path.
func (db *DB) unusable(err error) error {
	var ue *UnusableError
	if errors.As(err, &ue) {
		return err
	}
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("open store %q: %w", db.path, err)
	}
	var problem, remedy string
	side := "" // a -wal or -shm this user may not write
	if se.Code == sqlite3.ErrReadonly {
		side = sideFileOf(db.path)
	}
	switch {
	case diskFull(se): // SQLITE_FULL, or an I/O error whose errno is ENOSPC
		problem, remedy = "cannot be written: its disk is full", "free some space on it"
	case se.Code == sqlite3.ErrNotADB:
		problem = "is not an SQLite database"
	case se.Code == sqlite3.ErrCorrupt:
		problem, remedy = damagedReason, damagedRemedy
	case se.Code == sqlite3.ErrReadonly && !writable(db.path):
		problem, remedy = "is read-only", "make the file writable"
	case se.Code == sqlite3.ErrReadonly && side != "":
		problem = "cannot be written: " + side + " beside it is not writable by this user"
		remedy = "remove it, or make it writable (SQLite keeps the store's -wal and -shm files there; another user's read may have left them)"
	case se.Code == sqlite3.ErrReadonly:
		problem, remedy = "is read-only", "make the file writable"
	case busy(se):
		problem = fmt.Sprintf("is locked by another process (waited %v)", busyTimeout)
		remedy = "let that process finish (fuser names it), then try again"
	case se.Code == sqlite3.ErrCantOpen || se.Code == sqlite3.ErrPerm || se.Code == sqlite3.ErrAuth:
		problem = "cannot be opened"
	case se.Code == sqlite3.ErrIoErr:
		problem = "cannot be read"
	default:
		return fmt.Errorf("open store %q: %w", db.path, err)
	}
	var cause error = se
	if se.Code == sqlite3.ErrReadonly || se.Code == sqlite3.ErrCantOpen {
		// SQLite cannot create the -wal or -shm file: it says so only when
		// the directory's mode refuses (SQLITE_READONLY_DIRECTORY), not on
		// a read-only mount or an immutable directory.
		dir, base := filepath.Dir(db.path), filepath.Base(db.path)
		if dirErr := probeDir(dir); dirErr != nil || se.ExtendedCode == readonlyDirectory {
			problem = "cannot be written: its directory " + dir + " is read-only"
			remedy = fmt.Sprintf("make the directory writable (SQLite keeps %s-wal and %s-shm beside the store)", base, base)
			if dirErr != nil {
				cause = dirErr
			}
		}
	}
	reason := fmt.Sprintf("%s (%v)", problem, cause)
	if remedy != "" {
		reason += ": " + remedy
	}
	return &UnusableError{Path: db.path, Reason: reason, Err: err}
}

// sideFileOf names the store's -wal or -shm file when it exists and the
// process may not write it ("" when neither is so).
func sideFileOf(path string) string {
	for _, side := range []string{path + "-shm", path + "-wal"} {
		if _, err := os.Stat(side); err == nil && !writableFile(side) {
			return side
		}
	}
	return ""
}

// probeDir creates and removes a file in dir, to tell a directory SQLite
// cannot create its -wal and -shm files in.
func probeDir(dir string) error {
	f, err := os.CreateTemp(dir, ".aiperf-probe-")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
