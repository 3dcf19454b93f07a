-- Why a cell of a sweep with a convergence criterion (plan.Sweep.Convergence,
-- AIPerf's --convergence-*) stopped before its planned trials, e.g.
-- "time_to_first_token avg: cv 1.2% <= 5%": a cell with fewer trials than
-- planned and this set converged, it did not lose them. NULL for every other
-- cell; a resume clears it and the runner sets it again if the cell
-- converges again. converged_after is how many trials of the cell had ended
-- then (a trial deleted later does not change it).
ALTER TABLE cells ADD COLUMN converged TEXT;
ALTER TABLE cells ADD COLUMN converged_after INTEGER;
