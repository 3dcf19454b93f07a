// Package store keeps the history of benchmark runs in a SQLite database
// (mattn/go-sqlite3): sweeps, their cells, every run with its redacted
// configuration, run-level statistics, compact per-request records,
// control-hook calls and the client's self-audit. It also answers the
// queries behind `aiperf runs` and `aiperf compare`.
//
// The layout follows benbjohnson/wtf's sqlite package: Open applies the
// embedded migrations in migration/*.sql in order, each in its own
// transaction, and every write is one immediate transaction, so a run is
// either stored completely or not at all, even when the process is killed
// mid-write. The database runs in WAL mode with synchronous=NORMAL, foreign
// keys on and a 30 s busy timeout, so several processes may write to one file.
//
// The schema is documented in migration/0001_init.sql.
package store
