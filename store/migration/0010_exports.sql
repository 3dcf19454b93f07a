-- Where each run was streamed or logged beyond its files (issue 27): the
-- OpenTelemetry collector, the MLflow run, the live Prometheus endpoint, as
-- a JSON list of {kind, target, ref, ok, detail} (credentials redacted).
ALTER TABLE runs ADD COLUMN exports TEXT NOT NULL DEFAULT '[]';
