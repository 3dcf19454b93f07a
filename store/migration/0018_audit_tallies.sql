-- The client audit's tallies that have no column of their own, as a JSON
-- object under the client_audit names of the JSON export (auditTallies):
-- the requests cut and why (cut, cut_grace_period, cut_interrupt,
-- cut_on_purpose, cut_stopped), client_errors, bursts, not_streamed, malformed_chunks,
-- usage_untrusted, video_untrusted and cache_dropped with their first
-- reasons, and a DAG run's branches. So runs export writes the audit the run
-- wrote. '{}' for runs stored before it was kept.
ALTER TABLE runs ADD COLUMN audit_tallies TEXT NOT NULL DEFAULT '{}';
