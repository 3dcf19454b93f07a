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
// hold a request are kept, in time order.
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
	out := make([]Slice, len(keys))
	for i, k := range keys {
		start, end := k*sliceNs, (k+1)*sliceNs
		out[i] = Slice{StartNs: start, EndNs: end, Complete: start >= first && end <= last,
			Summary: Summarize(groups[k], streaming, slos...)}
	}
	return out
}
