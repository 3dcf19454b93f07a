-- The scrapes' profiling span (servermetrics.Result.Span: the only
-- profiling phase's name, or profiling_span) and the collection's bounds
-- on the run's clock (StartNs, EndNs), so that a run read back from the
-- store exports its GPU telemetry (telemetry_data, the CSV's GPU section)
-- as the run wrote it. NULL for runs stored before: the span is then
-- inferred from their series' phases.
ALTER TABLE runs ADD COLUMN server_span TEXT;
ALTER TABLE runs ADD COLUMN server_start_ns INTEGER;
ALTER TABLE runs ADD COLUMN server_end_ns INTEGER;
