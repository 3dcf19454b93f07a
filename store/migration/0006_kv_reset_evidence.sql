-- What the KV-cache reset verdict rests on (result.Audit.KVResetEvidence),
-- comma-separated: cached_tokens (the server's usage of the first requests),
-- server_counters (its scraped prefix-cache counters), both, or '' (none).
ALTER TABLE runs ADD COLUMN kv_reset_evidence TEXT NOT NULL DEFAULT '';
