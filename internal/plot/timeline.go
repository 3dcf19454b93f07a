package plot

import (
	"cmp"
	"math"
	"slices"

	"github.com/aiperf-go/aiperf/internal/result"
)

// Timeline is one run over time, in seconds from the run's clock start:
// each request's TTFT and latency at its send time, the requests in
// flight, the phases and the control-hook calls.
type Timeline struct {
	Name     string    `json:"name"`
	Title    string    `json:"title"`
	Requests []Request `json:"requests"`
	InFlight []Step    `json:"in_flight"`
	Phases   []Span    `json:"phases"`
	Events   []Event   `json:"events"`
}

// Request is one request on the timeline.
type Request struct {
	T         float64 `json:"t"`          // sent, s
	TTFTMs    float64 `json:"ttft_ms"`    // NaN without a first response
	LatencyMs float64 `json:"latency_ms"` // last response − sent; end − sent for a failure
	Failed    bool    `json:"failed"`
}

// Step says N requests were in flight from T until the next step.
type Step struct {
	T float64 `json:"t"`
	N int     `json:"n"`
}

// Span is a phase: its first send to its last end.
type Span struct {
	Name string  `json:"name"`
	Kind string  `json:"kind"` // warmup or profiling
	From float64 `json:"from"`
	To   float64 `json:"to"`
}

// Event is a control-hook call (reset_kv_cache, profiler_start,
// profiler_stop) at the time it started.
type Event struct {
	T    float64 `json:"t"`
	Hook string  `json:"hook"`
	OK   bool    `json:"ok"`
}

// maxSteps bounds the in-flight line: past it, steps are merged into
// maxSteps/2 bins each keeping its highest count.
const maxSteps = 4000

// TimelineOf lays a run (loaded with its records) out over time.
func TimelineOf(name, title string, r *result.Run) Timeline {
	if len(r.Records) == 0 {
		return Timeline{Name: name, Title: title}
	}
	flights := make([]flight, len(r.Records))
	for i := range r.Records {
		rec := &r.Records[i]
		f := flight{sentNs: rec.SentNs, endNs: rec.EndNs, ttftMs: math.NaN(), failed: rec.Error != nil,
			phase: rec.Phase, kind: rec.PhaseKind}
		end := rec.EndNs
		if rec.ResponseNs.Len() > 0 {
			if !rec.NotStreamed {
				f.ttftMs = float64(rec.ResponseNs.First()-rec.SentNs) / 1e6
			}
			if !f.failed {
				end = rec.ResponseNs.Last()
			}
		}
		f.latencyMs = float64(end-rec.SentNs) / 1e6
		flights[i] = f
	}
	var events []Event
	wallStart := r.Records[0].WallStartNs
	for _, c := range r.ControlHooks {
		if wallStart == 0 || c.StartedAt == 0 {
			continue
		}
		events = append(events, Event{T: seconds(c.StartedAt - wallStart), Hook: c.Hook, OK: c.OK})
	}
	return layOut(name, title, flights, events)
}

// flight is a request as a timeline lays it out: sent and ended on the
// run's clock (ns), its TTFT (NaN without a first response) and latency.
type flight struct {
	sentNs, endNs     int64
	ttftMs, latencyMs float64
	failed            bool
	phase, kind       string
}

// layOut builds the timeline of requests: their points, the in-flight
// steps and the phases' spans, with the hook calls.
func layOut(name, title string, flights []flight, events []Event) Timeline {
	tl := Timeline{Name: name, Title: title, Events: events}
	type edge struct {
		ns    int64
		delta int
	}
	edges := make([]edge, 0, 2*len(flights))
	phases := map[string]int{}
	for _, f := range flights {
		tl.Requests = append(tl.Requests, Request{T: seconds(f.sentNs), TTFTMs: f.ttftMs, LatencyMs: f.latencyMs, Failed: f.failed})
		edges = append(edges, edge{f.sentNs, 1}, edge{f.endNs, -1})
		j, ok := phases[f.phase]
		if !ok {
			j, phases[f.phase] = len(tl.Phases), len(tl.Phases)
			tl.Phases = append(tl.Phases, Span{Name: f.phase, Kind: f.kind, From: math.Inf(1), To: math.Inf(-1)})
		}
		tl.Phases[j].From = min(tl.Phases[j].From, seconds(f.sentNs))
		tl.Phases[j].To = max(tl.Phases[j].To, seconds(f.endNs))
	}
	slices.SortStableFunc(edges, func(a, b edge) int { return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.delta, b.delta)) })
	n := 0
	for _, e := range edges {
		n += e.delta
		if k := len(tl.InFlight) - 1; k >= 0 && tl.InFlight[k].T == seconds(e.ns) {
			tl.InFlight[k].N = n
			continue
		}
		tl.InFlight = append(tl.InFlight, Step{T: seconds(e.ns), N: n})
	}
	tl.InFlight = binSteps(tl.InFlight, maxSteps)
	return tl
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// binSteps merges steps into limit/2 equal time bins when there are more
// than limit, each bin drawn at its highest count (a peak stays visible).
func binSteps(steps []Step, limit int) []Step {
	if len(steps) <= limit {
		return steps
	}
	bins := limit / 2
	from, to := steps[0].T, steps[len(steps)-1].T
	width := (to - from) / float64(bins)
	out := make([]Step, 0, bins+1)
	for _, s := range steps {
		b := min(bins-1, int((s.T-from)/width))
		t := from + float64(b)*width
		if k := len(out) - 1; k >= 0 && out[k].T == t {
			out[k].N = max(out[k].N, s.N)
			continue
		}
		out = append(out, Step{T: t, N: s.N})
	}
	return append(out, Step{T: to, N: steps[len(steps)-1].N})
}
