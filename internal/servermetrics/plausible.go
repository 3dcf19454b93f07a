package servermetrics

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Bounds no GPU reports within: a figure beyond them is the exporter's
// error (or a metric read as what it is not), not a measurement.
const (
	maxGPUWatts = 10_000  // per GPU; today's largest draw about 1,200 W
	maxGPUMiB   = 1 << 30 // per GPU: a pebibyte
)

// impossible says why a headline row's value cannot be, or "" when it can
// (ImpossibleValue).
func impossible(r Row) string { return ImpossibleValue(r.Value, r.Unit) }

// ImpossibleValue says why a figure of a count, a percentage, a duration or
// a GPU's power or memory, in unit (as the headline rows name them:
// requests, %, ms, W, MiB, ...), cannot be: negative, a percentage above
// 100, a GPU's power or memory beyond any GPU's; "" when it can.
func ImpossibleValue(v float64, unit string) string {
	switch {
	case v < 0:
		return "it is negative"
	case unit == "%" && v > 100:
		return "a percentage above 100"
	case unit == "W" && v > maxGPUWatts:
		return fmt.Sprintf("above %d W for one GPU", maxGPUWatts)
	case unit == "MiB" && v > maxGPUMiB:
		return fmt.Sprintf("above %d MiB for one GPU", maxGPUMiB)
	}
	return ""
}

// A series is impossible, as a headline row is, when its exporter says
// what cannot be: a counter that falls more than once in a run (a fall is
// a restart of its server, counted from 0; a server that restarts twice
// while it is benchmarked is not the benchmark's server any more), or
// below 0; a histogram sample whose cumulative bucket counts fall, with a
// bucket above its _count or a +Inf bucket below it, or with a sum that is
// negative or not finite (OpenMetrics: a histogram's sum is a counter, left
// out when observations may be negative). The samples are checked as they are stored, so that
// thinning cannot hide one.

// flag keeps the first reason a sample of s could not be.
func (s *seriesBuf) flag(why string) {
	if s.bad == "" {
		s.bad = why
	}
}

// noteCounter checks counter sample v (NaN: absent) against the last.
func (s *seriesBuf) noteCounter(v float64) {
	switch {
	case math.IsNaN(v):
		return
	case v < 0:
		s.flag(fmt.Sprintf("a counter at %g, below 0", v))
	case v < s.last:
		s.falls++
	}
	s.last = v
}

// countNoise is the relative difference between a histogram's bucket and
// its _count that is float rounding, not a contradiction.
const countNoise = 1e-9

// noteHistogram checks a histogram sample: its cumulative counts for the
// upper bounds (the last +Inf), its count and its sum. The +Inf bucket is
// the count (Prometheus defines it so): one below the count, as one above
// it, says the buckets or the count are not the server's observations.
func (s *seriesBuf) noteHistogram(bounds, cum []float64, count, sum float64) {
	for j := 1; j < len(cum); j++ {
		if cum[j] < cum[j-1] {
			s.flag(fmt.Sprintf("cumulative bucket counts that fall (le=%s holds %g, le=%s %g)",
				formatLE(bounds[j-1]), cum[j-1], formatLE(bounds[j]), cum[j]))
			return
		}
	}
	tol := countNoise * max(math.Abs(count), 1)
	for j, c := range cum {
		switch {
		case c > count+tol:
			s.flag(fmt.Sprintf("a bucket above the histogram's count (le=%s holds %g, _count is %g)", formatLE(bounds[j]), c, count))
			return
		case math.IsInf(bounds[j], 1) && c < count-tol:
			s.flag(fmt.Sprintf("a +Inf bucket below the histogram's count (le=+Inf holds %g, _count is %g)", c, count))
			return
		}
	}
	switch {
	case math.IsNaN(sum) || math.IsInf(sum, 0):
		s.flag(fmt.Sprintf("a histogram sum of %g", sum))
	case sum < 0:
		s.flag(fmt.Sprintf("a negative histogram sum (%g)", sum))
	}
}

// duplicated is why a series a scrape held twice cannot be: which of its
// samples the server measured is not said. Prometheus refuses the
// duplicate (a sample for a series and time it has); its first is kept.
const duplicated = "the scrape held it twice (the same family and labels), and a series has one value at a time: " +
	"the first was kept"

// repeats flags s and reports whether a histogram's upper bounds or a
// summary's quantiles hold one twice: expfmt merges a histogram or
// summary that a scrape held twice into one sample with every bucket
// twice.
func (s *seriesBuf) repeats(bounds []float64) bool {
	if !slices.IsSorted(bounds) {
		bounds = slices.Sorted(slices.Values(bounds))
	}
	for j := 1; j < len(bounds); j++ {
		if bounds[j] == bounds[j-1] {
			s.flag(duplicated)
			return true
		}
	}
	return false
}

// impossible says why s cannot be what its server measured, or "".
func (s *seriesBuf) impossible() string {
	switch {
	case s.bad != "":
		return s.bad
	case s.falls > 1:
		return fmt.Sprintf("the counter fell %d times in the run, and a counter falls only when its server restarts", s.falls)
	}
	return ""
}

// refuse marks out impossible (why) and moves the stats it makes untrue to
// Refused: every stat of a counter, a histogram's all but its count and
// count_rate (its buckets stay, the server's own deltas).
func refuse(out *Series, why string) {
	out.Impossible = why
	untrue := func(k string) bool { return out.Type != TypeHistogram || (k != "count" && k != "count_rate") }
	for k, v := range out.Stats {
		if untrue(k) {
			if out.Refused == nil {
				out.Refused = map[string]float64{}
			}
			out.Refused[k] = v
			delete(out.Stats, k)
		}
	}
	for _, ts := range out.Timeslices {
		for k := range ts.Stats {
			if untrue(k) {
				delete(ts.Stats, k)
			}
		}
	}
}

// impossibleWarning is the line that says a series cannot be.
func impossibleWarning(ep Endpoint, s *seriesBuf) string {
	untrue := "total and rate"
	switch s.typ {
	case TypeHistogram:
		untrue = "sum, average and percentile estimates"
	case TypeGauge:
		untrue = "statistics"
	}
	return fmt.Sprintf("%s: %s: %s cannot be what the server measured (%s): its exporter is wrong; "+
		"its %s are left out of the exports and the store, and marked (!) on the console",
		sourceName(ep.Source), ep.URL, s.display(), s.impossible(), untrue)
}

// display names s in a warning: its family and labels, as exposed.
func (s *seriesBuf) display() string {
	name := s.fam.name
	if len(s.labels) > 0 {
		pairs := make([]string, 0, len(s.labels))
		for k, v := range s.labels {
			pairs = append(pairs, fmt.Sprintf("%s=%q", k, v))
		}
		slices.Sort(pairs)
		name += "{" + strings.Join(pairs, ",") + "}"
	}
	return name
}

// shown is s as the headline reads it: its refused stats back, to be
// shown marked (!).
func shown(s Series) Series {
	if len(s.Refused) == 0 {
		return s
	}
	st := maps.Clone(s.Stats)
	if st == nil {
		st = map[string]float64{}
	}
	maps.Copy(st, s.Refused)
	s.Stats = st
	return s
}

// impossibleSource is why a family a headline row comes from (the names in
// its Metric) is impossible, or "".
func (h *headline) impossibleSource(r Row) string {
	for _, name := range strings.Fields(r.Metric) {
		for _, s := range h.fams[name] {
			if s.Impossible != "" {
				return name + ": " + s.Impossible
			}
		}
	}
	return ""
}
