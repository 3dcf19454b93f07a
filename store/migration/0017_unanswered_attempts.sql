-- The attempts of a control call that were sent and got no answer (a
-- timeout, a connection dropped after the request went out): a server
-- finishes a reset whose client left, so each may still have run, even when
-- a retry was answered (hooks.Call.Unanswered). unanswered_at_ns is when the
-- last of them was given up (wall-clock ns; 0 when none).
ALTER TABLE control_calls ADD COLUMN unanswered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE control_calls ADD COLUMN unanswered_at_ns INTEGER NOT NULL DEFAULT 0;
