-- Claims of running sweeps, so that two processes never run one sweep (two
-- `aiperf sweep --resume` at once would run its trials twice and load the
-- server together) nor write one artifact directory at once. A sweep claims
-- two keys in one immediate transaction and deletes them when it ends:
-- 'sweep <name> <plan_sha256>' and 'artifacts <absolute directory>'. A row
-- outlives an owner that was killed; the next claimant on the same host
-- takes it over once pid is no longer running.
CREATE TABLE sweep_locks (
    key        TEXT PRIMARY KEY,
    what       TEXT NOT NULL,                    -- for messages: sweep "scan", artifact directory /abs/dir
    pid        INTEGER NOT NULL,
    host       TEXT NOT NULL,
    started_at TEXT NOT NULL,
    token      TEXT NOT NULL                     -- random per claim: a release deletes its own rows only
);
