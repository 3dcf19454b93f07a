-- The verdict of the KV-cache reset check (result.Audit.KVReset): verified,
-- not cleared or unverifiable; '' when the run did not reset the cache.
ALTER TABLE runs ADD COLUMN kv_reset TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN kv_reset_detail TEXT NOT NULL DEFAULT '';
