-- The client audit's sends dropped at a full in-flight cap (AIPerf's policy
-- for rate mode with --concurrency), and the worker processes of a sharded
-- cell (--workers): each one's clock offset, records and own audit, as JSON.
ALTER TABLE runs ADD COLUMN cap_skipped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN workers TEXT NOT NULL DEFAULT '[]';
