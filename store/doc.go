// Package store keeps the history of benchmark runs in a SQLite database
// (mattn/go-sqlite3): sweeps, their cells, every run with its redacted
// configuration, run-level statistics, compact per-request records,
// control-hook calls, the client's self-audit and the server metrics and GPU
// telemetry scraped during the run. It also answers the queries behind
// `aiperf runs` and `aiperf compare`.
//
// The layout follows benbjohnson/wtf's sqlite package: Open applies the
// embedded migrations in migration/*.sql in order, each in its own
// transaction, and every write is one immediate transaction, so a run is
// either stored completely or not at all, even when the process is killed
// mid-write. The database runs in WAL mode with synchronous=NORMAL, foreign
// keys on and a 30 s busy timeout, so several processes may write to one file.
//
// Open refuses, with an *UnusableError, a file it could not record a run
// in (a directory, a file that is not an aiperf store, a damaged or
// read-only one, one written by a newer aiperf) before anything is read or
// written; OpenReadOnly serves the commands that only read, on read-only
// files and directories too. LockSweep claims a running sweep and its
// artifact directory, so two processes never run one sweep at once.
//
// The schema is documented in migration/0001_init.sql and the later
// migrations.
package store
