package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/report"
)

// The files that make a directory a run, as AIPerf's plot looks for them.
const (
	FileJSONL     = report.JSONLFile // per-request records
	FileJSON      = report.JSONFile  // the run's statistics
	FileAggregate = "profile_export_aiperf_aggregate.json"
	// trialsDir holds a multi-run's (or a repeated sweep's) trials.
	trialsDir    = "profile_runs"
	aggregateDir = "aggregate"
)

// trialName matches a trial directory: run_0001 (--num-profile-runs),
// trial_0001 (a sweep's).
var trialName = regexp.MustCompile(`^(run|trial)_\d+$`)

// MaxDirs bounds the directories Find visits under one path.
const MaxDirs = 100_000

// Found is a run directory and the index of the path it was found under.
type Found struct {
	Dir  string
	Root int
}

// Find returns the run directories under paths, each once, in path order
// and then sorted, as AIPerf's plot discovers them: a directory holding
// profile_export.jsonl and profile_export_aiperf.json is a run; one
// holding profile_export_aiperf_aggregate.json is a sweep cell's aggregate
// over its trials, unless it only shadows a single-trial cell beside it
// (<cell>/aggregate, aggregate/<cell>). Runs nested in runs are found too,
// except the trials of an aggregate: its profile_runs/ sibling and its own
// trial_NNNN/ or run_NNNN/ directories (Load reads them as its trials).
// Symbolic links are followed once. A path that is missing, not a
// directory, or holds no run is an error naming it.
func Find(paths []string) ([]Found, error) {
	var out []Found
	seen := map[string]bool{}
	for i, p := range paths {
		st, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%s: no such directory", p)
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", p, err)
		case !st.IsDir():
			return nil, fmt.Errorf("%s is not a directory: give a run's artifact directory or one that holds runs", p)
		}
		w := walker{visited: map[string]bool{}}
		if err := w.walk(p, 0); err != nil {
			return nil, err
		}
		if len(w.runs) == 0 {
			return nil, noRuns(p, w.compressed)
		}
		slices.Sort(w.runs)
		for _, d := range w.runs {
			real, err := filepath.EvalSymlinks(d)
			if err != nil || seen[real] {
				continue
			}
			seen[real] = true
			out = append(out, Found{Dir: d, Root: i})
		}
	}
	return out, nil
}

func noRuns(p string, compressed bool) error {
	if compressed {
		return fmt.Errorf("%s: its exports are compressed (.zst), which are not read: decompress them (zstd -d) and plot again", p)
	}
	return fmt.Errorf("%s holds no run: a run's directory has %s and %s (a sweep cell's, %s); "+
		"give such a directory or one that holds them, or stored runs (aiperf runs list)", p, FileJSONL, FileJSON, FileAggregate)
}

// walker collects the run directories under one path.
type walker struct {
	runs       []string
	visited    map[string]bool // resolved paths: a symlink loop ends
	count      int
	compressed bool
}

// maxDepth bounds the nesting walked.
const maxDepth = 32

func (w *walker) walk(dir string, depth int) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || w.visited[real] || depth > maxDepth {
		return nil
	}
	w.visited[real] = true
	if w.count++; w.count > MaxDirs {
		return fmt.Errorf("more than %d directories under the path: give the run's or the sweep's directory itself", MaxDirs)
	}
	aggregate := isAggregate(dir)
	if aggregate || singleRun(dir) {
		w.runs = append(w.runs, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // unreadable: as AIPerf, a warning's worth, not a failure
	}
	skipTrials := hasAggregateSibling(dir)
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".zst") {
			w.compressed = true
		}
		if !isDir(dir, e) {
			continue
		}
		if (name == trialsDir && (skipTrials || aggregate)) || (aggregate && trialName.MatchString(name)) {
			continue // an aggregate's trials: Load reads them with it
		}
		if err := w.walk(filepath.Join(dir, name), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// isDir reports whether an entry is a directory, through a symlink.
func isDir(dir string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && st.IsDir()
}

func exists(dir, name string) bool {
	st, err := os.Stat(filepath.Join(dir, name))
	return err == nil && st.Mode().IsRegular()
}

// singleRun reports whether dir holds a run's records and statistics.
func singleRun(dir string) bool { return exists(dir, FileJSONL) && exists(dir, FileJSON) }

// isAggregate reports whether dir holds a cell's aggregate that is not a
// shadow of a single-trial cell: <cell>/aggregate beside <cell>'s run
// files, or aggregate/<cell> beside <cell>/.
func isAggregate(dir string) bool {
	if !exists(dir, FileAggregate) {
		return false
	}
	parent := filepath.Dir(dir)
	if filepath.Base(dir) == aggregateDir && singleRun(parent) {
		return false
	}
	return !(filepath.Base(parent) == aggregateDir && singleRun(filepath.Join(filepath.Dir(parent), filepath.Base(dir))))
}

// hasAggregateSibling reports whether dir's aggregate/ holds the cells'
// aggregates (dir/aggregate or dir/aggregate/<cell>): its profile_runs/
// then holds their trials.
func hasAggregateSibling(dir string) bool {
	agg := filepath.Join(dir, aggregateDir)
	if isAggregate(agg) {
		return true
	}
	entries, err := os.ReadDir(agg)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.IsDir() && isAggregate(filepath.Join(agg, e.Name())) })
}

// trialDirs are the trials of an aggregate directory, in name order: its
// own trial_NNNN/ or run_NNNN/ (an `aiperf sweep` cell), <cell>/profile_runs/*
// for <cell>/aggregate (--num-profile-runs, an independent sweep), and
// profile_runs/*/<cell> for aggregate/<cell> (a repeated sweep).
func trialDirs(dir string) []string {
	var out []string
	add := func(pattern string) {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			if singleRun(m) {
				out = append(out, m)
			}
		}
	}
	add(filepath.Join(globQuote(dir), "trial_*"))
	add(filepath.Join(globQuote(dir), "run_*"))
	parent := filepath.Dir(dir)
	if filepath.Base(dir) == aggregateDir {
		add(filepath.Join(globQuote(parent), trialsDir, "*"))
	}
	if filepath.Base(parent) == aggregateDir {
		add(filepath.Join(globQuote(filepath.Dir(parent)), trialsDir, "*", globQuote(filepath.Base(dir))))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// globQuote escapes the pattern characters of a path.
func globQuote(p string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(p)
}
