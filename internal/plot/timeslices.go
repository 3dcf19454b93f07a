package plot

import (
	"fmt"
	"math"

	"github.com/aiperf-go/aiperf/internal/artifacts"
	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/metrics"
)

// sliceFigures are AIPerf's timeslice figures: a metric's avg in each
// slice of the timeslice CSV, its Metric column the display name.
var sliceFigures = []struct {
	name, display, tag string
}{
	{"timeslices_ttft", "Time to First Token", metrics.TagTTFT},
	{"timeslices_itl", "Inter Token Latency", metrics.TagITL},
	{"timeslices_throughput", "Request Throughput", metrics.TagRequestThroughput},
	{"timeslices_latency", "Request Latency", metrics.TagRequestLatency},
}

// maxSlices bounds the slices drawn (a slice index past it is left out).
const maxSlices = 10_000

// timesliceBars builds AIPerf's timeslices_* figures of a run: per
// metric, a bar per slice of its avg (a missing slice has none), the
// slices labelled by their start when the slice duration is known.
func timesliceBars(r *artifacts.Run) []Bars {
	var out []Bars
	for _, sf := range sliceFigures {
		values := map[int]float64{}
		unit := ""
		last := -1
		for _, row := range r.Slices {
			if row.Metric != sf.display || row.Stat != "avg" || row.Index < 0 || row.Index >= maxSlices {
				continue
			}
			values[row.Index], unit, last = row.Value, row.Unit, max(last, row.Index)
		}
		if last < 0 {
			continue
		}
		k := compare.Key{Metric: sf.tag, Stat: "avg"}
		b := Bars{Name: sf.name, Title: sf.display + " across time slices",
			Y: Axis{Key: k, Label: axisLabel(k, unit), Better: compare.DirectionOf(k)}}
		s := BarSeries{Name: "avg"}
		for i := range last + 1 {
			b.Categories = append(b.Categories, sliceLabel(i, r.SliceSeconds))
			v, ok := values[i]
			if !ok {
				v = math.NaN()
			}
			s.Values = append(s.Values, Interval{Mean: v, Low: math.NaN(), High: math.NaN()})
		}
		b.Series = []BarSeries{s}
		out = append(out, b)
	}
	return out
}

// sliceLabel names slice i: its start in seconds, or its index.
func sliceLabel(i int, seconds float64) string {
	if seconds <= 0 {
		return fmt.Sprintf("slice %d", i)
	}
	return fmt.Sprintf("%g s", math.Round(float64(i)*seconds*1e3)/1e3)
}
