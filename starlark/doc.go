// Package starlark loads a sweep script (a .star file) into plain Go: Load runs
// the script once and returns the []plan.Sweep it declared; LoadScript also
// returns its []plan.Search. No go.starlark.net type crosses this package's
// API (a search's planner function is a search.Planner).
//
// Builtins declare, Go decides: profile() and sweep() only record what the
// script asks for; after the script has run, Load expands every sweep into
// cells (matrix, zip or scenarios), applies skip, assigns per-cell seeds and
// validates every cell, reporting all problems at once.
//
// # The script environment
//
// A script sees only these names besides the Starlark built-ins (len, range,
// fail, ...): there is no clock, no randomness and no file or network access,
// so a plan is a pure function of the script and its vars.
//
//	profile(**options) -> profile
//	    Every `aiperf profile` option under its flag name in snake_case
//	    (concurrency, synthetic_input_tokens_mean, reset_kv_cache, ...); the
//	    short aliases isl, osl, isl_stddev, osl_stddev and num_requests work
//	    too. Unset options keep their `aiperf profile` defaults. None unsets
//	    an optional value.
//	p.replace(**options) -> profile
//	    A copy of p with some options changed (profiles are immutable).
//	p.<option>
//	    The option's value: int, float, string, bool, list of strings, or
//	    None when unset.
//	sweep(name, base, matrix = None, zip = None, scenarios = None,
//	      trials = 1, cooldown_seconds = 0, skip = None, same_seed = False,
//	      convergence = None)
//	    Declares a sweep over base (a profile). At most one of:
//	      matrix    = {"option": [values], ...}  Cartesian product; the first
//	                  key is the outermost loop (itertools.product order).
//	      zip       = {"option": [values], ...}  element-wise; equal lengths.
//	      scenarios = [{"name": "label", "option": value, ...}, ...]
//	    Without any of them the sweep has one cell, the base ("base").
//	    skip = lambda cell: ... drops the cells for which it returns a true
//	    value; cell.<option> and cell["option"] are the cell's swept values,
//	    cell.label its label and cell.profile its full profile.
//	    Each cell's random_seed is the base seed plus the cell's position in
//	    the expansion (before skip), unless the cell sets random_seed itself
//	    or same_seed = True. convergence = {"metric": ..., "stat": ...,
//	    "mode": ..., "threshold": ...} stops each cell adding trials once
//	    its statistic is stable (as --convergence-*, trials the cap).
//	search(name, base, space, sla = None, objective = "", direction = "maximize",
//	       planner = None, max_iterations = 0, initial_points = 0, seed = 0,
//	       trials = 1, max_replicates = 0, confidence = 0.95, grid = None,
//	       stats = None, cooldown_seconds = 0)
//	    Declares an adaptive search (docs/search.md): each probe is a cell of
//	    base with its point of space ({"concurrency": [1, 1000]}) applied.
//	    planner is a built-in name (monotonic, smooth_isotonic, bo, grid) or
//	    a function of the history (a struct per probe: index, point,
//	    verdict, confidence, objective, trials, failed_trials, stats,
//	    values) returning the next point (a dict) or None. LoadScript binds
//	    it: each call runs on a thread of its own with the script's step
//	    limit, no load() and no declarations, and it is called once on the
//	    empty history so a broken planner fails at load.
//	vars
//	    A frozen dict of the --set key=value pairs; values are strings
//	    (vars.get("requests", 100) gives a default; int() converts).
//	load("lib/common.star", "name")
//	    Loads a module relative to the calling file; each module runs once.
//	    Only .star files inside the top-level script's directory tree, or
//	    the tree of an Options.LibPaths directory, load, where they are
//	    after symlinks are resolved; any other file is refused unread.
//	struct(**fields), json.encode/decode, math.*
//	    From go.starlark.net's standard modules.
//
// Cell labels join option_value pairs with "__" (concurrency_4__
// synthetic_input_tokens_mean_128); a scenario's name is its label. Values
// that would read alike as a directory name get a short hash appended, and
// labels over 255 bytes are shortened (see plan.CellLabels). Cell ids hash
// the sweep name and the sorted parameters, so they stay stable across runs
// for --resume.
//
// A plan is bounded: a sweep() whose cells (counted before skip from the
// lengths of its lists) times its trials would take the script over
// Options.MaxTrials fails before anything is expanded.
//
// A script is bounded in time and memory. Every file is rewritten after it
// is parsed (rewrite.go) so that its operators, calls and slices go through
// guards (guard.go): an operation that would build a string of more than
// MaxStringBytes (16 MiB), a list, tuple, dict or set of more than
// MaxElements (2^20) or an integer of more than MaxIntBits fails at its
// position before it allocates ([0] * 10**9, list(range(10**9)), a join,
// a doubling, a replace or format that repeats, str or json.encode of a
// value whose parts are shared), and one that reads a large value is
// charged steps for it, so that Options.MaxSteps bounds the time. The heap
// is measured every 65,536 steps and before every large operation: a
// script that grows it by more than Options.MaxMemory (1 GiB) stops. A
// compound assignment (x += y) whose target calls a function is refused, as
// its guard would evaluate the target twice.
//
// # Errors
//
// Every problem in the script is an *Error carrying its file:line:col; a
// failure below top level also carries a backtrace. Validation problems of
// the expanded cells are all reported together (errors.Join of *Error), each
// at its sweep() call.
package starlark
