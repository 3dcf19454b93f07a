package metrics

import (
	"maps"
	"slices"
)

// Slice is the summary of one time slice of a run (AIPerf's timeslices):
// the requests that started in [StartNs, EndNs) of wall-clock time.
type Slice struct {
	StartNs, EndNs int64 // wall-clock ns
	// Complete reports that the window lies within the benchmark, from the
	// first request's start to the last response; the first and last
	// slices are usually partial.
	Complete bool
	Summary  Summary
}

// Timeslices cuts records into slices of sliceNs nanoseconds of wall-clock
// time and summarizes each (Summarize, with the same SLOs), as AIPerf: a
// request belongs to the slice its start falls in, counted in whole slices
// of the epoch (so the first slice may be partial), and only slices that
// hold a request are kept, in time order. The time-weighted metrics are
// the run's curves (every request, whenever it started) over the slice's
// window within the run's (sliceMetrics).
func Timeslices(records []Record, sliceNs int64, streaming bool, slos ...SLO) []Slice {
	if sliceNs <= 0 || len(records) == 0 {
		return nil
	}
	groups := map[int64][]Record{}
	first, last := records[0].WallStartNs, int64(0)
	for i := range records {
		r := &records[i]
		k := r.WallStartNs / sliceNs
		groups[k] = append(groups[k], *r)
		first = min(first, r.WallStartNs)
		last = max(last, r.WallStartNs+max(r.EndNs-r.SentNs, 0))
	}
	keys := slices.Sorted(maps.Keys(groups))
	run := newSweepRun(records, streaming)
	out := make([]Slice, len(keys))
	for i, k := range keys {
		start, end := k*sliceNs, (k+1)*sliceNs
		sum := summarize(groups[k], streaming, false, slos...)
		sum.Metrics = run.sliceMetrics(sum.Metrics, start, end)
		out[i] = Slice{StartNs: start, EndNs: end, Complete: start >= first && end <= last, Summary: sum}
	}
	return out
}

// sweepRun is a run's time-weighted curves, for its slices: built once
// from every request, each slice reads them over its own window.
type sweepRun struct {
	curves   [numCurves]step
	from, to float64 // the run's window (sweepWindow), on the records' clock
	wallOff  int64   // wall-clock ns minus the records' clock
	ok       bool    // a request not cancelled: curves to read
}

func newSweepRun(records []Record, streaming bool) sweepRun {
	reqs := sweepRequests(records, streaming)
	if len(reqs) == 0 {
		return sweepRun{}
	}
	r := sweepRun{curves: sweepCurves(reqs), wallOff: records[0].WallStartNs - records[0].SentNs, ok: true}
	r.from, r.to = sweepWindow(reqs)
	return r
}

// sliceMetrics is a slice's metrics ms (summarize's of a part) with the
// time-weighted ones, those of the run's curves over the slice's wall-clock
// window [start, end) within the run's window: a request still in flight
// from an earlier slice counts in this one's concurrency, as AIPerf's do.
func (r sweepRun) sliceMetrics(ms []Metric, start, end int64) []Metric {
	if !r.ok {
		return ms
	}
	from := max(r.from, float64(start-r.wallOff))
	to := max(from, min(r.to, float64(end-r.wallOff)))
	return append(ms, sweepStats(r.curves, from, to)...)
}
