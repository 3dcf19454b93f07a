-- aiperf run store, schema version 1.
--
-- Times are UTC text, RFC 3339 with nanoseconds ("2026-05-01T12:00:00.000000000Z"),
-- so they sort as text and work with SQLite's date functions. Durations carry
-- their unit in the column name (_ns, _ms). JSON columns hold JSON text.

-- A sweep: one `aiperf sweep` invocation (or `aiperf profile --num-profile-runs N`).
CREATE TABLE sweeps (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT NOT NULL,
    script_path   TEXT NOT NULL DEFAULT '',
    script_sha256 TEXT NOT NULL DEFAULT '',
    vars          TEXT NOT NULL DEFAULT '{}',   -- JSON object of --set values
    trials        INTEGER NOT NULL DEFAULT 1,   -- planned trials per cell
    started_at    TEXT NOT NULL,
    ended_at      TEXT,
    status        TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed', 'interrupted'))
);
CREATE INDEX sweeps_name ON sweeps (name, id);

-- A cell of a sweep. id is plan.Cell.ID (a hash of the sweep name and the
-- sorted parameters), so it repeats when a sweep of the same name runs again.
CREATE TABLE cells (
    sweep_id INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    id       TEXT NOT NULL,
    label    TEXT NOT NULL,
    idx      INTEGER NOT NULL,                   -- position in the sweep, from 0
    params   TEXT NOT NULL DEFAULT '[]',         -- JSON [{"name":..., "value":...}], declaration order
    PRIMARY KEY (sweep_id, id)
);

-- A run: one standalone `aiperf profile`, or one trial of a sweep cell.
CREATE TABLE runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused, even after a delete
    sweep_id       INTEGER REFERENCES sweeps (id) ON DELETE CASCADE,
    cell_id        TEXT,
    trial          INTEGER,                      -- from 1
    trial_key      TEXT,                         -- "<cell_id>/<trial:04d>" (plan.Trial.Key); for --resume
    name           TEXT NOT NULL DEFAULT '',     -- --name label
    benchmark_id   TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL CHECK (status IN ('complete', 'failed', 'interrupted')),
    error          TEXT NOT NULL DEFAULT '',
    was_cancelled  INTEGER NOT NULL DEFAULT 0,
    model          TEXT NOT NULL DEFAULT '',     -- comma-separated --model values
    url            TEXT NOT NULL DEFAULT '',     -- comma-separated --url values, credentials redacted
    endpoint_type  TEXT NOT NULL DEFAULT '',
    streaming      INTEGER NOT NULL DEFAULT 0,
    mode           TEXT NOT NULL DEFAULT '',     -- 'concurrency' or 'rate'
    concurrency    INTEGER,
    request_rate   REAL,
    isl            INTEGER,                      -- --synthetic-input-tokens-mean
    osl            INTEGER,                      -- --output-tokens-mean (NULL: server decides)
    seed           INTEGER,
    config         TEXT NOT NULL DEFAULT '{}',   -- JSON plan.Profile, secrets redacted
    cli_command    TEXT NOT NULL DEFAULT '',     -- redacted
    tool_version   TEXT NOT NULL DEFAULT '',
    host           TEXT NOT NULL DEFAULT '',
    started_at     TEXT NOT NULL,
    ended_at       TEXT NOT NULL,
    artifact_dir   TEXT NOT NULL DEFAULT '',
    record_count   INTEGER NOT NULL DEFAULT 0,   -- rows this run has in records
    -- Client self-audit (send_lag statistics are in run_stats, phase 'audit').
    target_rate    REAL,                         -- requests/s asked for (rate mode)
    achieved_rate  REAL,                         -- profiling sends / sending window
    cap_delayed    INTEGER NOT NULL DEFAULT 0,
    retried        INTEGER NOT NULL DEFAULT 0,
    precise_pacing INTEGER NOT NULL DEFAULT 0,
    client_bound   INTEGER NOT NULL DEFAULT 0,
    warnings       TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
    FOREIGN KEY (sweep_id, cell_id) REFERENCES cells (sweep_id, id),
    UNIQUE (sweep_id, trial_key)
);
CREATE INDEX runs_name ON runs (name, id);

-- Run-level statistics: one row per metric and statistic. A record metric has
-- avg, min, max, p1, p5, p10, p25, p50, p75, p90, p95, p99, std, count and sum;
-- a derived or aggregate metric (request_throughput, error_request_count, ...)
-- has the single stat 'value'. phase is 'profiling', 'warmup', or 'audit'
-- (the client's send_lag).
CREATE TABLE run_stats (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    phase  TEXT NOT NULL,
    metric TEXT NOT NULL,                        -- AIPerf tag, e.g. time_to_first_token
    stat   TEXT NOT NULL,
    value  REAL NOT NULL,
    unit   TEXT NOT NULL DEFAULT '',
    header TEXT NOT NULL DEFAULT '',             -- display name, e.g. Time to First Token
    ord    INTEGER NOT NULL DEFAULT 0,           -- display order of the metric
    PRIMARY KEY (run_id, phase, metric, stat)
) WITHOUT ROWID;

-- Per-request records, compact: timings as nanosecond offsets from the run's
-- monotonic start (ttft_ns and latency_ns are intervals from sent_ns), token
-- counts, and the outcome. No prompt or response text.
CREATE TABLE records (
    run_id           INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx              INTEGER NOT NULL,           -- issue order within the run
    phase            TEXT NOT NULL,
    phase_kind       TEXT NOT NULL,              -- 'warmup' or 'profiling'
    url_idx          INTEGER NOT NULL DEFAULT 0,
    scheduled_ns     INTEGER NOT NULL,
    sent_ns          INTEGER NOT NULL,
    ttft_ns          INTEGER,                    -- first response - sent; NULL without one
    latency_ns       INTEGER,                    -- last response - sent; NULL without one
    end_ns           INTEGER NOT NULL,
    wall_start_ns    INTEGER NOT NULL DEFAULT 0, -- wall-clock ns of offset 0
    isl              INTEGER NOT NULL DEFAULT 0,
    osl              INTEGER NOT NULL DEFAULT 0, -- client count of output tokens
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    status           INTEGER NOT NULL DEFAULT 0, -- HTTP status, 0 without a response
    error_type       TEXT,                       -- NULL on success
    retried          INTEGER NOT NULL DEFAULT 0,
    cancelled        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;

-- The run's error summary: identical errors counted.
CREATE TABLE run_errors (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    code    INTEGER NOT NULL,
    type    TEXT NOT NULL,
    message TEXT NOT NULL,
    count   INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- Control-hook calls (KV-cache reset, profiler start/stop) as they happened.
CREATE TABLE control_calls (
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    hook          TEXT NOT NULL,                 -- reset_kv_cache, profiler_start, profiler_stop
    phase         TEXT NOT NULL DEFAULT '',
    origin        TEXT NOT NULL,
    path          TEXT NOT NULL,
    status        INTEGER NOT NULL,
    attempts      INTEGER NOT NULL,
    duration_ms   REAL NOT NULL,
    ok            INTEGER NOT NULL,
    error         TEXT NOT NULL DEFAULT '',
    warning       TEXT NOT NULL DEFAULT '',
    started_at_ns INTEGER NOT NULL DEFAULT 0,    -- wall-clock ns
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
