package swimlane

import (
	"fmt"
	"path/filepath"
)

// MaxRows bounds the rows a view draws: the slots that started first, up
// to this many rows (a slot is one row, more when its requests overlap).
const MaxRows = 200

// Options are the command line's choices for a view.
type Options struct {
	// Target is the target concurrency (-c), drawn as a reference line in
	// the concurrency panel; 0 draws none.
	Target int
	// Ramp (--ramp, seconds) overrides the concurrency ramp read from
	// profile_export_aiperf.json for the ramp-done marker.
	Ramp *float64
}

// View is a run laid out for drawing.
type View struct {
	Run    *Run
	Layout *Layout
	Name   string // the run's name: its directory's
	// T0 is the time axis' origin: the first request's start (ns).
	T0 int64
	// TMaxS is the last request's end, seconds from T0.
	TMaxS float64
	// Active is the requests in flight, Idle the sessions alive between
	// their requests, over every request of the run.
	Active, Idle []Step
	PeakActive   int
	Target       int
	// RampS and BenchEndS are the ramp-done and benchmark-end markers,
	// seconds from T0 (nil: none): the ramp's and the benchmark's
	// durations after the first profiling request's start.
	RampS, BenchEndS *float64
	// Slots and Rows are what is drawn: the first Slots slots, Rows rows.
	Slots, Rows int
	// Sessions and Requests count the sessions and requests drawn.
	Sessions, Requests int
	Notes              []string
	// rampDur and benchDur are the ramp's and the benchmark's durations.
	rampDur, benchDur float64
	// capNote says which slots are drawn, when not all are.
	capNote string
}

// NewView lays the run out and computes its curves.
func NewView(r *Run, opt Options) *View {
	v := &View{Run: r, Layout: NewLayout(r), Name: filepath.Base(filepath.Clean(r.Dir)), Target: opt.Target,
		Notes: append([]string(nil), r.Notes...)}
	v.T0 = r.Requests[0].Start
	last := r.Requests[0].End
	profiling := int64(0)
	seen := false
	for _, q := range r.Requests {
		v.T0, last = min(v.T0, q.Start), max(last, q.End)
		if !q.Warmup && (!seen || q.Start < profiling) {
			profiling, seen = q.Start, true
		}
	}
	if !seen {
		profiling = v.T0
	}
	v.TMaxS = seconds64(last - v.T0)
	v.Active = r.Active()
	v.Idle = Subtract(r.Alive(), v.Active)
	v.PeakActive = Peak(v.Active)
	offset := seconds64(profiling - v.T0)
	ramp := r.RampS
	if opt.Ramp != nil {
		ramp = opt.Ramp
	}
	if ramp != nil {
		v.RampS, v.rampDur = ptr(offset+*ramp), *ramp
	}
	if r.BenchEndS != nil {
		v.BenchEndS, v.benchDur = ptr(offset+*r.BenchEndS), *r.BenchEndS
	}
	v.cap()
	return v
}

// cap chooses the slots drawn: from the first, while they fit in MaxRows
// rows (the first slot at least, its first MaxRows rows).
func (v *View) cap() {
	l := v.Layout
	for _, s := range l.Slots {
		if v.Slots > 0 && v.Rows+s.Rows > MaxRows {
			break
		}
		v.Slots++
		v.Rows = min(v.Rows+s.Rows, MaxRows)
		for _, ln := range s.Lanes {
			for _, m := range l.Lanes[ln].Members {
				v.Sessions++
				v.Requests += len(m.Depths)
			}
		}
	}
	if v.Slots < len(l.Slots) || v.Rows < l.Rows {
		v.capNote = fmt.Sprintf("drew the first %d of %d slots (%d rows; %d of %d sessions, the first to start); "+
			"the concurrency curves count all %d requests", v.Slots, len(l.Slots), v.Rows, v.Sessions, len(v.Run.Sessions),
			len(v.Run.Requests))
		v.Notes = append(v.Notes, v.capNote)
	}
}

// Subagents counts the subagent sessions of the run.
func (v *View) Subagents() int {
	n := 0
	for _, s := range v.Run.Sessions {
		if s.Sub {
			n++
		}
	}
	return n
}

// Title is the figure's title, as AIPerf's: the run, its sessions (and
// subagents) and slots.
func (v *View) Title() string {
	n, sub := len(v.Run.Sessions), v.Subagents()
	sessions := fmt.Sprintf("%d sessions", n)
	if sub > 0 {
		sessions = fmt.Sprintf("%d sessions + %d subagents", n-sub, sub)
	}
	return fmt.Sprintf("%s — %s across %d slots", v.Name, sessions, len(v.Layout.Slots))
}

// sec is a wall-clock time in seconds from T0.
func (v *View) sec(t int64) float64 { return seconds64(t - v.T0) }

func seconds64(ns int64) float64 { return float64(ns) / 1e9 }

func ptr[T any](x T) *T { return &x }
