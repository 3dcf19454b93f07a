-- A search (aiperf profile --search-recipe or --search-space, a script's
-- search()) is a sweep of kind 'search' whose cells are its probes: cell idx
-- is the probe's iteration_idx. Every trial of a probe is a run of its cell,
-- as in any sweep. search_history holds search_history.json (AIPerf's schema
-- with aiperf's extensions), rewritten after every trial; search_answer is
-- its one-line summary (the bracket or the best probe, and the trials spent
-- against the grid replaced). Both are NULL for a sweep.
ALTER TABLE sweeps ADD COLUMN kind TEXT NOT NULL DEFAULT 'sweep' CHECK (kind IN ('sweep', 'search'));
ALTER TABLE sweeps ADD COLUMN search_history TEXT;
ALTER TABLE sweeps ADD COLUMN search_answer TEXT;

-- The planner's decisions: one row per probe, written before its first
-- trial runs, with the point (the searched parameters' values, in the
-- space's order), why the planner chose it, and its verdict on the SLA
-- filters once judged (updated after every trial of the probe).
CREATE TABLE search_probes (
    sweep_id   INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,                 -- iteration_idx, from 0
    cell_id    TEXT NOT NULL,
    point      TEXT NOT NULL,                    -- JSON array of numbers
    why        TEXT NOT NULL DEFAULT '',         -- the planner's reason, e.g. "bisect [8, 16]"
    verdict    TEXT NOT NULL DEFAULT '' CHECK (verdict IN ('', 'pass', 'fail', 'ambiguous')),
    confidence REAL,                             -- the verdict's; NULL for a point verdict or ambiguous
    PRIMARY KEY (sweep_id, idx),
    FOREIGN KEY (sweep_id, cell_id) REFERENCES cells (sweep_id, id)
) WITHOUT ROWID;
