package plot

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/artifacts"
)

// Dirs is a selection of artifact directories, as `aiperf plot PATH...`
// takes them: the runs found under each path (artifacts.Find), loaded,
// each path a series.
type Dirs struct {
	Paths  []string
	Series []string           // a name per path: its base name
	Runs   [][]*artifacts.Run // per path, its runs in Find's order
	Labels [][]string         // per path, a label per run: its directory under the path
	Notes  []string           // what the reader skipped
}

// LoadDirs finds and loads the runs under paths.
func LoadDirs(paths []string) (*Dirs, error) {
	found, err := artifacts.Find(paths)
	if err != nil {
		return nil, err
	}
	d := &Dirs{Paths: paths, Runs: make([][]*artifacts.Run, len(paths)), Labels: make([][]string, len(paths))}
	for _, p := range paths {
		d.Series = append(d.Series, seriesName(p, d.Series))
	}
	for _, f := range found {
		r, err := artifacts.Load(f.Dir)
		if err != nil {
			return nil, err
		}
		d.Runs[f.Root] = append(d.Runs[f.Root], r)
		d.Labels[f.Root] = append(d.Labels[f.Root], runLabel(paths[f.Root], f.Dir))
		d.Notes = append(d.Notes, r.Notes...)
	}
	return d, nil
}

// seriesName names a path's series by its base name, numbered when an
// earlier path has the same.
func seriesName(p string, taken []string) string {
	name := filepath.Base(filepath.Clean(p))
	if abs, err := filepath.Abs(p); err == nil && (name == "." || name == "..") {
		name = filepath.Base(abs)
	}
	out := name
	for i := 2; slices.Contains(taken, out); i++ {
		out = fmt.Sprintf("%s#%d", name, i)
	}
	return out
}

// runLabel names a run by its directory under its path, the aggregate/
// and profile_runs/ levels left out ("concurrency_4" for
// aggregate/concurrency_4), "/" made "_"; the path itself is named by its
// base name.
func runLabel(root, dir string) string {
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		rel = dir
	}
	var parts []string
	for _, p := range strings.Split(filepath.ToSlash(rel), "/") {
		if p != "." && p != "aggregate" && p != "profile_runs" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return seriesName(dir, nil)
	}
	return strings.Join(parts, "_")
}

// all are every run, with its label, in path order.
func (d *Dirs) all() ([]*artifacts.Run, []string) {
	var runs []*artifacts.Run
	var labels []string
	for i := range d.Runs {
		runs, labels = append(runs, d.Runs[i]...), append(labels, d.Labels[i]...)
	}
	return runs, labels
}

// Single reports whether the selection is one run: AIPerf's single-run
// mode (its figures over time), else its multi-run comparison.
func (d *Dirs) Single() bool {
	runs, _ := d.all()
	return len(runs) == 1
}

// Figures builds the selection's figures, AIPerf's and ours. One run:
// AIPerf's over-time figures (ttft_over_time, itl_over_time,
// latency_over_time, dispersed_throughput_over_time, the timeslices_*
// with --slice-duration, gpu_utilization_and_throughput_over_time with
// GPU telemetry, ttft_timeline), then our cdf and timeline. Several: AIPerf's
// comparisons (the per-GPU ones with GPU telemetry), our views and bars
// (a series per path; ttft_vs_throughput's TTFT p99 view is
// ttft_p99_vs_throughput), and per run label our cells/<label>/cdf (the
// paths overlaid) and cells/<label>/timeline_<series>.
func (d *Dirs) Figures() (figs []Figure, notes []string) { return d.FiguresFor(DefaultConfig()) }

// FiguresFor is Figures with AIPerf's figures chosen and defined by a plot
// config.
func (d *Dirs) FiguresFor(cfg *Config) (figs []Figure, notes []string) {
	notes = slices.Clone(cfg.Notes)
	runs, labels := d.all()
	if len(runs) == 1 {
		figs, more := singleFigures(runs[0], labels[0], cfg.SingleRun)
		return figs, append(notes, more...)
	}
	for _, c := range cfg.comparisons() {
		switch sc := comparisonOf(c, runs, labels); {
		case sc != nil:
			figs = append(figs, sc.Figure())
		case c.x.Metric == tagPerGPU || c.y.Metric == tagPerGPU:
			notes = append(notes, c.name+": no run has GPU telemetry (aiperf profile --gpu-telemetry), so no throughput per GPU")
		default:
			notes = append(notes, fmt.Sprintf("%s: no run has both %s and %s", c.name, c.x, c.y))
		}
	}
	var tables []table
	for i := range d.Runs {
		if len(d.Runs[i]) > 0 {
			tables = append(tables, runsTable(d.Series[i], d.Runs[i], d.Labels[i]))
		}
	}
	for _, sc := range scatters(tables) {
		if sc.Name == "ttft_vs_throughput" { // AIPerf's name is AIPerf's view (the averages)
			sc.Name = "ttft_p99_vs_throughput"
		}
		figs = append(figs, sc.Figure())
	}
	for _, b := range bars(tables) {
		figs = append(figs, b.Figure())
	}
	cells, cellNotes := d.cellFigures()
	return append(figs, cells...), append(notes, cellNotes...)
}

// singleFigures are one run's figures: AIPerf's over time, then ours. An
// aggregate's are its first trial's over time, and its CDF a line per
// trial.
func singleFigures(r *artifacts.Run, label string, aiperfs []string) (figs []Figure, notes []string) {
	reqs, trial := r.Requests, r
	if r.Aggregate {
		if len(r.Trials) == 0 {
			return nil, []string{r.Dir + ": an aggregate without its trials' records: nothing over time to draw"}
		}
		trial, reqs = r.Trials[0], r.Trials[0].Requests
		notes = append(notes, fmt.Sprintf("%s: the figures over time are of its first trial, %s", label, trial.Dir))
	}
	byName := map[string]Figure{}
	for _, o := range []*OverTime{
		perRequest("ttft_over_time", "TTFT per request over time", "TTFT (ms)", reqs, func(q artifacts.Request) float64 { return q.TTFTMs }),
		perRequest("itl_over_time", "Inter-token latency per request over time", "ITL (ms)", reqs,
			func(q artifacts.Request) float64 { return q.ITLMs }),
		latencyOverTime(reqs), dispersedOverTime(reqs), gpuOverTime(trial),
	} {
		if o != nil {
			byName[o.Name] = o.Figure()
		}
	}
	if s := requestSpans(reqs); s != nil {
		byName[s.Name] = s.Figure()
	}
	for _, b := range timesliceBars(trial) {
		byName[b.Name] = b.Figure()
	}
	for _, name := range aiperfs {
		if f, ok := byName[name]; ok {
			figs = append(figs, f)
		}
	}
	var names []string
	var sets []times
	for i, t := range trialsOf(r) {
		names, sets = append(names, fmt.Sprintf("trial %d", i+1)), append(sets, timesOf(t))
	}
	if len(sets) == 1 {
		names[0] = label
	}
	if c := cdfOfTimes("cdf", "TTFT and ITL per request", names, sets); c != nil {
		figs = append(figs, c.Figure(""))
	}
	tl := timelineOfRun("timeline", label+" over time", trial)
	figs = append(figs, tl.Figure(label))
	return figs, notes
}

// trialsOf are the runs with records behind r: itself, or an aggregate's
// trials.
func trialsOf(r *artifacts.Run) []*artifacts.Run {
	if r.Aggregate {
		return r.Trials
	}
	return []*artifacts.Run{r}
}

// timesOf are a run's TTFTs and ITLs of its successful profiling
// requests, as our CDFs take them.
func timesOf(r *artifacts.Run) times {
	var t times
	for _, q := range r.Requests {
		if q.Failed || q.Phase == "warmup" || math.IsNaN(q.TTFTMs) {
			continue
		}
		t.ttft = append(t.ttft, q.TTFTMs)
		if !math.IsNaN(q.ITLMs) {
			t.itl = append(t.itl, q.ITLMs)
		}
	}
	return t
}

// timelineOfRun lays a run's requests and hook calls out over time, from
// its first send.
func timelineOfRun(name, title string, r *artifacts.Run) Timeline {
	t0 := origin(r.Requests)
	var flights []flight
	for _, q := range r.Requests {
		if !q.Timed {
			continue
		}
		kind := q.Phase
		flights = append(flights, flight{sentNs: q.StartNs - t0, endNs: q.EndNs - t0, ttftMs: q.TTFTMs,
			latencyMs: q.LatencyMs, failed: q.Failed, phase: q.Phase, kind: kind})
		if q.Failed || math.IsNaN(q.LatencyMs) {
			flights[len(flights)-1].latencyMs = float64(q.EndNs-q.StartNs) / 1e6
		}
	}
	var events []Event
	for _, h := range r.Hooks {
		if h.StartedAtNs != 0 && t0 != 0 {
			events = append(events, Event{T: seconds(h.StartedAtNs - t0), Hook: h.Hook, OK: h.OK})
		}
	}
	return layOut(name, title, flights, events)
}

// cellFigures are our per-label figures over the paths: the CDFs (a line
// per path) and each path's timeline, for the first CellLimit runs of
// each path.
func (d *Dirs) cellFigures() (figs []Figure, notes []string) {
	var labels []string
	for i, ls := range d.Labels {
		if len(ls) > CellLimit {
			notes = append(notes, fmt.Sprintf("%s: %d of its %d runs have per-run figures (CDFs, timelines); "+
				"`aiperf plot` of a run's directory draws any other", d.Paths[i], CellLimit, len(ls)))
		}
		for _, l := range ls[:min(len(ls), CellLimit)] {
			if !slices.Contains(labels, l) {
				labels = append(labels, l)
			}
		}
	}
	for _, label := range labels {
		var names []string
		var sets []times
		for i, ls := range d.Labels {
			j := slices.Index(ls, label)
			if j < 0 || j >= CellLimit {
				continue
			}
			r := d.Runs[i][j]
			var t times
			for _, tr := range trialsOf(r) {
				tt := timesOf(tr)
				t.ttft, t.itl = append(t.ttft, tt.ttft...), append(t.itl, tt.itl...)
			}
			names, sets = append(names, d.Series[i]), append(sets, t)
			if trials := trialsOf(r); len(trials) > 0 && len(trials[0].Requests) > 0 {
				tl := timelineOfRun(fmt.Sprintf("cells/%s/timeline_%s", fileSafe(label), fileSafe(d.Series[i])),
					fmt.Sprintf("%s, %s over time", d.Series[i], label), trials[0])
				figs = append(figs, tl.Figure(label))
			}
		}
		if c := cdfOfTimes("cells/"+fileSafe(label)+"/cdf", label+": TTFT and ITL per request", names, sets); c != nil {
			figs = append(figs, c.Figure(label))
		}
	}
	return figs, notes
}
