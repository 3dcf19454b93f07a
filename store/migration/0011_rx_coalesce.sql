-- The receive coalescing window each run's client read with
-- (--rx-coalesce-usecs or its default for the client's cores), µs; 0: off.
ALTER TABLE runs ADD COLUMN rx_coalesce_usecs INTEGER NOT NULL DEFAULT 0;
