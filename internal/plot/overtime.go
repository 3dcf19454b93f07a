package plot

import (
	"cmp"
	"math"
	"slices"

	"github.com/aiperf-go/aiperf/internal/artifacts"
	"github.com/aiperf-go/aiperf/internal/metrics"
)

// Line is a named line over time: Step holds each value until the next
// point, Fill shades below it.
type Line struct {
	Name   string `json:"name"`
	Points []XY   `json:"points"`
	Step   bool   `json:"step,omitempty"`
	Fill   bool   `json:"fill,omitempty"`
}

// OverTime is one of AIPerf's single-run figures: a value per request
// (Points) against its request number or time, lines over them (rolling
// percentiles, a throughput), and a Lower panel on the same time axis (GPU
// utilization) when it has lines.
type OverTime struct {
	Name   string `json:"name"`
	Title  string `json:"title"`
	X      string `json:"x"` // axis titles
	Y      string `json:"y"`
	Points []XY   `json:"points,omitempty"`
	Lines  []Line `json:"lines,omitempty"`
	Lower  *Panel `json:"lower,omitempty"`
}

// Panel is a lower panel of an OverTime figure.
type Panel struct {
	Y     string `json:"y"`
	Lines []Line `json:"lines"`
}

// Axis titles of the over-time figures. Time is in seconds since the run's
// first request was sent (AIPerf starts its throughput at the first token
// and its latency at the first end; one origin lines the figures up).
const (
	axisRequestNumber = "request number (in the export's order)"
	axisTime          = "time since the first request was sent (s)"
)

// origin is the first send of the timed requests, ns (0 when none).
func origin(reqs []artifacts.Request) int64 {
	var o int64
	first := true
	for _, q := range reqs {
		if q.Timed && (first || q.StartNs < o) {
			o, first = q.StartNs, false
		}
	}
	return o
}

// perRequest is AIPerf's ttft_over_time and itl_over_time: each request's
// value against its request number (its line in profile_export.jsonl,
// from 0); requests without one (failed, unstreamed) are left out.
func perRequest(name, title, y string, reqs []artifacts.Request, value func(artifacts.Request) float64) *OverTime {
	o := &OverTime{Name: name, Title: title, X: axisRequestNumber, Y: y}
	for i, q := range reqs {
		if v := value(q); !math.IsNaN(v) {
			o.Points = append(o.Points, XY{float64(i), v})
		}
	}
	if len(o.Points) == 0 {
		return nil
	}
	return o
}

// rollingWindow is AIPerf's window for the latency percentiles: the last
// 10 requests (fewer at the start).
const rollingWindow = 10

// latencyOverTime is AIPerf's latency_over_time: each request's latency at
// the time it ended, with the rolling p50, p95 and p99 of the last
// rollingWindow requests in end order (numpy's linear percentiles).
func latencyOverTime(reqs []artifacts.Request) *OverTime {
	t0 := origin(reqs)
	var pts []XY
	for _, q := range reqs {
		if q.Timed && !math.IsNaN(q.LatencyMs) {
			pts = append(pts, XY{seconds(q.EndNs - t0), q.LatencyMs})
		}
	}
	if len(pts) == 0 {
		return nil
	}
	slices.SortStableFunc(pts, func(a, b XY) int { return cmp.Compare(a.X, b.X) })
	o := &OverTime{Name: "latency_over_time", Title: "Request latency over time, with rolling percentiles",
		X: "time the request ended, since the first was sent (s)", Y: "request latency (ms)", Points: pts}
	p50, p95, p99 := Line{Name: "p50"}, Line{Name: "p95"}, Line{Name: "p99"}
	window := make([]float64, 0, rollingWindow)
	for i, p := range pts {
		window = append(window[:0], yOf(pts[max(0, i-rollingWindow+1):i+1])...)
		s := metrics.Compute(window)
		p50.Points = append(p50.Points, XY{p.X, s.P50})
		p95.Points = append(p95.Points, XY{p.X, s.P95})
		p99.Points = append(p99.Points, XY{p.X, s.P99})
	}
	o.Lines = []Line{p50, p95, p99}
	return o
}

func yOf(pts []XY) []float64 {
	out := make([]float64, len(pts))
	for i, p := range pts {
		out[i] = p.Y
	}
	return out
}

// dispersedThroughput is AIPerf's event-based output token throughput: a
// request adds osl/(end − first token) tokens/s from its first token to
// its end (from its send when it has no TTFT), so the line is the sum of
// the rates of the requests generating at each moment. Requests without
// tokens or time add nothing.
func dispersedThroughput(reqs []artifacts.Request) Line {
	type event struct {
		ns   int64
		rate float64
	}
	t0 := origin(reqs)
	var events []event
	for _, q := range reqs {
		if !q.Timed || math.IsNaN(q.OSL) || q.OSL <= 0 {
			continue
		}
		gen := q.StartNs
		if q.TTFTMs > 0 { // false for NaN
			gen += int64(q.TTFTMs * 1e6)
		}
		if q.EndNs <= gen {
			continue
		}
		rate := q.OSL / (float64(q.EndNs-gen) / 1e9)
		events = append(events, event{gen, rate}, event{q.EndNs, -rate})
	}
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.ns, b.ns) })
	l := Line{Name: "output tokens/s", Step: true, Fill: true}
	sum := 0.0
	for i, e := range events {
		sum += e.rate
		if i+1 < len(events) && events[i+1].ns == e.ns {
			continue // one point per instant
		}
		l.Points = append(l.Points, XY{seconds(e.ns - t0), max(0, sum)})
	}
	return l
}

func dispersedOverTime(reqs []artifacts.Request) *OverTime {
	l := dispersedThroughput(reqs)
	if len(l.Points) == 0 {
		return nil
	}
	return &OverTime{Name: "dispersed_throughput_over_time", Title: "Dispersed output token throughput over time",
		X: axisTime, Y: "output token throughput (tokens/s)", Lines: []Line{l}}
}

// gpuUtilization is the GPUs' mean utilization (%) at each scrape.
func gpuUtilization(r *artifacts.Run, t0 int64) Line {
	l := Line{Name: "GPU utilization (mean over GPUs)"}
	type acc struct {
		sum float64
		n   int
	}
	at := map[int64]*acc{}
	var stamps []int64
	for _, s := range r.GPU {
		v, ok := s.Values["nvidia_gpu_utilization"]
		if !ok {
			v, ok = s.Values["gpu_utilization"]
		}
		if !ok {
			continue
		}
		a := at[s.TimestampNs]
		if a == nil {
			a = &acc{}
			at[s.TimestampNs] = a
			stamps = append(stamps, s.TimestampNs)
		}
		a.sum, a.n = a.sum+v, a.n+1
	}
	slices.Sort(stamps)
	for _, ts := range stamps {
		l.Points = append(l.Points, XY{seconds(ts - t0), at[ts].sum / float64(at[ts].n)})
	}
	return l
}

// gpuOverTime is AIPerf's gpu_utilization_and_throughput_over_time: the
// dispersed throughput above, the GPUs' utilization below (AIPerf draws
// them on two y axes of one panel).
func gpuOverTime(r *artifacts.Run) *OverTime {
	util := gpuUtilization(r, origin(r.Requests))
	if len(util.Points) == 0 {
		return nil
	}
	return &OverTime{Name: "gpu_utilization_and_throughput_over_time", Title: "Output token throughput with GPU utilization",
		X: axisTime, Y: "output token throughput (tokens/s)", Lines: []Line{dispersedThroughput(r.Requests)},
		Lower: &Panel{Y: "GPU utilization (%)", Lines: []Line{util}}}
}

// RequestSpans is AIPerf's request timeline (ttft_timeline): each request
// a horizontal bar at the height of its TTFT, from its send to its first
// token (prefill) and on to its end (generation).
type RequestSpans struct {
	Name  string        `json:"name"`
	Title string        `json:"title"`
	Spans []RequestSpan `json:"spans"`
}

// RequestSpan is one request's bar, in seconds since the first send.
type RequestSpan struct {
	Start      float64 `json:"start"`
	FirstToken float64 `json:"first_token"`
	End        float64 `json:"end"`
	TTFTMs     float64 `json:"ttft_ms"`
}

// requestSpans are the timed requests with a TTFT no longer than their
// duration (AIPerf leaves the others out).
func requestSpans(reqs []artifacts.Request) *RequestSpans {
	t0 := origin(reqs)
	rs := &RequestSpans{Name: "ttft_timeline", Title: "Request timeline: prefill (to the first token) and generation, at each request's TTFT"}
	for _, q := range reqs {
		if !q.Timed || math.IsNaN(q.TTFTMs) {
			continue
		}
		s := RequestSpan{Start: seconds(q.StartNs - t0), End: seconds(q.EndNs - t0), TTFTMs: q.TTFTMs}
		s.FirstToken = s.Start + q.TTFTMs/1e3
		if s.FirstToken > s.End {
			continue
		}
		rs.Spans = append(rs.Spans, s)
	}
	if len(rs.Spans) == 0 {
		return nil
	}
	return rs
}
