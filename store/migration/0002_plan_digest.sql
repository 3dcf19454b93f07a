-- Resume matches a sweep by the digest of its expanded plan (every cell's
-- id, parameters and redacted profile), not by the main script's bytes: a
-- different --set value or an edited load()ed module is a different plan.
ALTER TABLE sweeps RENAME COLUMN script_sha256 TO plan_sha256;
