-- The server's own account of a run (result.Run.Server): the Prometheus
-- endpoints scraped while it ran (the server's /metrics, DCGM exporters) and
-- every series reduced per phase. A run saved with collection off has
-- server_warnings NULL and no rows below; a run that collected has
-- server_warnings '[]' or the warnings (an endpoint that 404s, times out,
-- returns garbage), even when no endpoint answered.
ALTER TABLE runs ADD COLUMN server_warnings TEXT;

-- One row per scraped endpoint.
CREATE TABLE server_endpoints (
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,                -- position in result order
    url         TEXT NOT NULL,                   -- credentials redacted
    source      TEXT NOT NULL,                   -- 'server' (an inference server) or 'gpu' (a DCGM exporter)
    scrapes     INTEGER NOT NULL,
    failures    INTEGER NOT NULL,
    interval_ns INTEGER NOT NULL,
    last_error  TEXT NOT NULL DEFAULT '',        -- the last failure, when there was one
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- One row per source, endpoint, metric family, label set and phase: the
-- identity of a reduced series. Its values are in server_stats.
CREATE TABLE server_series (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,                 -- position in result order
    source     TEXT NOT NULL,                    -- 'server' or 'gpu'
    endpoint   TEXT NOT NULL,                    -- the scraped URL, credentials redacted
    metric     TEXT NOT NULL,                    -- the family name, e.g. vllm:num_requests_running
    labels     TEXT NOT NULL DEFAULT '{}',       -- JSON object, keys sorted: equal label sets are equal text
    type       TEXT NOT NULL,                    -- gauge, counter, histogram, summary or unknown
    phase      TEXT NOT NULL,                    -- the phase the statistics cover, as the run named it
    phase_kind TEXT NOT NULL DEFAULT '',         -- 'profiling' or 'warmup' (from the run's phases); '' for anything else
    unit       TEXT NOT NULL DEFAULT '',         -- as the collector names it for a known family, e.g. 's'
    friendly   TEXT NOT NULL DEFAULT '',         -- display name of a known family
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
-- compare's lookup: the profiling series of given families in given runs.
CREATE INDEX server_series_metric ON server_series (run_id, phase_kind, metric);

-- The reduced values of a series, one row per statistic, in the family's own
-- unit (Prometheus base units: seconds, bytes, ratios 0..1): a gauge has avg,
-- min, max, std, p50, p90, p99 over its samples in the phase; a counter delta
-- (over the phase) and rate (per second); a histogram count and sum (deltas),
-- avg and quantiles (p50, p90, p95, p99, estimated from the bucket deltas).
-- Values that are not finite are not stored.
CREATE TABLE server_stats (
    run_id INTEGER NOT NULL,
    series INTEGER NOT NULL,                     -- server_series.seq
    stat   TEXT NOT NULL,
    value  REAL NOT NULL,
    PRIMARY KEY (run_id, series, stat),
    FOREIGN KEY (run_id, series) REFERENCES server_series (run_id, seq) ON DELETE CASCADE
) WITHOUT ROWID;
