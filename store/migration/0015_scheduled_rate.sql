-- The schedule's own rate (result.Audit.ScheduledRate): a rate, user-centric
-- or fixed run's profiling sends per second between its first and last
-- scheduled send, beside which its send rate is judged. NULL for a
-- concurrency run and for runs stored before it was kept.
ALTER TABLE runs ADD COLUMN scheduled_rate REAL;
