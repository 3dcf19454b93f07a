-- --reset-kv-cache-path may be given several times: a stored configuration's
-- reset_kv_cache_path becomes a list of paths.
UPDATE runs
SET config = json_set(config, '$.reset_kv_cache_path', json_array(json_extract(config, '$.reset_kv_cache_path')))
WHERE json_type(config, '$.reset_kv_cache_path') = 'text';
