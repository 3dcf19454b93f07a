package servermetrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Sections of the headline rows.
const (
	SectionServer = "Server"
	SectionGPU    = "GPU"
)

// Row is one line of the console's Server or GPU section: plain data,
// rendered by the report.
type Row struct {
	Section  string  `json:"section"`       // SectionServer or SectionGPU
	Endpoint string  `json:"endpoint"`      // redacted URL
	GPU      string  `json:"gpu,omitempty"` // the GPU's index (its gpu label), GPU rows only
	Name     string  `json:"name"`          // e.g. "Running requests", "Server TTFT"
	Stat     string  `json:"stat"`          // avg, max, p50, p99, total, rate or ratio
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`   // as displayed: requests, %, ms, tokens/s, preemptions, MiB, W
	Metric   string  `json:"metric"` // the family it comes from ("a / b" for a ratio)
	// Labels are the series' labels when its family has several label sets
	// on the endpoint (one row each); counters and histograms are summed
	// over their label sets instead.
	Labels map[string]string `json:"labels,omitempty"`
	// Impossible says why Value cannot be what the server measured (a
	// negative count, a percentage above 100, ...): its exporter is wrong,
	// or the metric is not what its name says. "" for a plausible value.
	Impossible string `json:"impossible,omitempty"`
}

// Headline picks the console rows over the profiling span (Result.Span).
// Per server endpoint: running and waiting requests (avg, max; a gauge's
// avg is its average over time, StatTimeWeightedAvg), KV-cache
// usage (max), prefix-cache hit rate (hits over queries, or the server's
// own hit-rate gauge), speculative decoding's draft acceptance rate and
// acceptance length (from vLLM's counters, or SGLang's gauges), preemptions, the server's TTFT, ITL and end-to-end
// latency (p50, p99 from its histograms) and generated tokens per second.
// Per GPU of each DCGM endpoint: utilization, memory used and power (avg,
// max). A row whose family the server does not expose is left out; a row
// whose value cannot be, or that comes from an impossible series (its
// refused stats), is kept, with Impossible saying why.
func Headline(r *Result) []Row {
	var rows []Row
	for _, ep := range r.Endpoints {
		fams := map[string][]Series{}
		for _, s := range r.Series {
			if s.Endpoint == ep.URL && s.Phase == r.Span {
				name := AIPerfName(s.Metric, s.Type) // also a result of a version that kept the _total
				fams[name] = append(fams[name], shown(s))
			}
		}
		h := headline{endpoint: ep.URL, fams: fams}
		var epRows []Row
		if ep.Source == SourceGPU {
			epRows = h.gpu()
		} else {
			epRows = h.server()
		}
		for i := range epRows {
			epRows[i].Impossible = cmp.Or(impossible(epRows[i]), h.impossibleSource(epRows[i]))
		}
		rows = append(rows, epRows...)
	}
	return rows
}

// headline builds one endpoint's rows.
type headline struct {
	endpoint string
	fams     map[string][]Series
	rows     []Row
}

// pick returns the preferred family of role the endpoint exposes.
func (h *headline) pick(r role) (string, []Series) {
	for _, name := range byRole(r) {
		if ss := h.fams[name]; len(ss) > 0 {
			return name, ss
		}
	}
	return "", nil
}

func (h *headline) add(row Row) {
	row.Section, row.Endpoint = SectionServer, h.endpoint
	h.rows = append(h.rows, row)
}

func (h *headline) server() []Row {
	h.gauges(roleRunning, "requests", 1, "avg", "max")
	h.gauges(roleWaiting, "requests", 1, "avg", "max")
	h.gauges(roleKVUsage, "%", 100, "max")
	h.hitRate()
	h.specDecode()
	if name, ss := h.pick(rolePreemptions); name != "" {
		h.add(Row{Name: "Preemptions", Stat: "total", Value: sumStat(ss, "total"), Unit: "preemptions", Metric: name})
	}
	for _, r := range []role{roleTTFT, roleITL, roleE2E} {
		name, ss := h.pick(r)
		if name == "" {
			continue
		}
		bounds, counts := mergeBuckets(ss)
		for _, p := range []struct {
			q    float64
			stat string
		}{{0.5, "p50 est."}, {0.99, "p99 est."}} { // interpolated inside a bucket: its width is the resolution
			if v, ok := bucketQuantile(p.q, bounds, counts); ok {
				h.add(Row{Name: knownByName[name].friendly, Stat: p.stat, Value: v * 1000, Unit: "ms" + bucketNote(p.q, bounds, counts),
					Metric: name})
			}
		}
	}
	if name, ss := h.pick(roleGenTokens); name != "" {
		h.add(Row{Name: "Generation throughput", Stat: "rate", Value: sumStat(ss, "rate"), Unit: "tokens/s", Metric: name})
	} else if name, ss := h.pick(roleGenThroughput); name != "" {
		if v, n := sumFigure(ss, "avg"); n > 0 {
			h.add(Row{Name: "Generation throughput", Stat: "avg", Value: v, Unit: "tokens/s", Metric: name})
		}
	}
	return h.rows
}

// gauges adds the stats of the role's gauge, scaled, a row per label set
// (its avg the time-weighted one: figure).
func (h *headline) gauges(r role, unit string, scale float64, stats ...string) {
	name, ss := h.pick(r)
	for _, s := range ss {
		for _, st := range stats {
			v, ok := figure(s, st)
			if !ok {
				continue
			}
			row := Row{Name: knownByName[name].friendly, Stat: st, Value: v * scale, Unit: unit, Metric: name}
			if len(ss) > 1 {
				row.Labels = s.Labels
			}
			h.add(row)
		}
	}
}

// hitRate adds the prefix-cache hit rate: hits over queries from the
// counters when the server has them, else its own hit-rate gauge.
func (h *headline) hitRate() {
	if hits, queries, source, ok := h.lookups(); ok {
		if queries > 0 {
			h.add(Row{Name: "Prefix-cache hit rate", Stat: "ratio", Value: 100 * hits / queries, Unit: "%", Metric: source})
		}
		return
	}
	if name, ss := h.pick(roleHitRate); name != "" {
		if v, n := sumFigure(ss, "avg"); n > 0 {
			h.add(Row{Name: "Prefix-cache hit rate", Stat: "avg", Value: 100 * v / float64(n), Unit: "%", Metric: name})
		}
	}
}

// lookups are the prefix-cache hits and queries (in tokens) over the span.
func (h *headline) lookups() (hits, queries float64, source string, ok bool) {
	names, ok := lookupFamilies(func(name string) bool { return len(h.fams[name]) > 0 })
	if !ok {
		return 0, 0, "", false
	}
	hits = sumStat(h.fams[names.hits], "total")
	queries = sumStat(h.fams[names.queries], "total")
	if names.plusHits {
		queries += hits
	}
	return hits, queries, names.String(), true
}

// lookupNames are the counters of prefix-cache hits and queries a server
// has: vLLM's hits and queries, or cached and prompt tokens (queries are
// prompt + cached tokens when the prompt counter leaves them out).
type lookupNames struct {
	hits, queries string
	plusHits      bool
}

func (n lookupNames) String() string { return n.hits + " / " + n.queries }

// lookupFamilies finds the prefix-cache counters among those has reports.
func lookupFamilies(has func(name string) bool) (lookupNames, bool) {
	first := func(r role) string {
		for _, name := range byRole(r) {
			if has(name) {
				return name
			}
		}
		return ""
	}
	if hits, queries := first(rolePrefixHits), first(rolePrefixQueries); hits != "" && queries != "" {
		return lookupNames{hits: hits, queries: queries}, true
	}
	cached := first(roleCachedTokens)
	if cached == "" {
		return lookupNames{}, false
	}
	server, _, _ := strings.Cut(cached, ":")
	for _, name := range byRole(rolePromptTokens) {
		if strings.HasPrefix(name, server+":") && has(name) {
			return lookupNames{hits: cached, queries: name, plusHits: knownByName[name].promptExcludesCached}, true
		}
	}
	return lookupNames{}, false
}

// figure is a gauge series' statistic as the console shows it: its avg is
// the time-weighted average (StatTimeWeightedAvg), not AIPerf's mean of the
// samples, which weighs the marks taken before and after the load like
// the scrapes during it and so depends on the run's length; false when the
// series has none (no scrape between the window's edges, or a result of an
// older version).
func figure(s Series, st string) (float64, bool) {
	if st == "avg" {
		st = StatTimeWeightedAvg
	}
	v, ok := s.Stats[st]
	return v, ok
}

// sumFigure sums a figure over the series that have it, and counts them.
func sumFigure(ss []Series, st string) (sum float64, n int) {
	for _, s := range ss {
		if v, ok := figure(s, st); ok {
			sum, n = sum+v, n+1
		}
	}
	return sum, n
}

// sumStat sums a stat over series.
func sumStat(ss []Series, stat string) float64 {
	var sum float64
	for _, s := range ss {
		sum += s.Stats[stat]
	}
	return sum
}

// mergeBuckets sums the bucket deltas of histogram series with the same
// buckets as the first (label sets of one family).
func mergeBuckets(ss []Series) (bounds, counts []float64) {
	for _, b := range ss[0].Buckets {
		v, err := strconv.ParseFloat(b.LE, 64)
		if err != nil {
			return nil, nil
		}
		bounds = append(bounds, v)
	}
	counts = make([]float64, len(bounds))
	for _, s := range ss {
		if len(s.Buckets) != len(bounds) {
			continue
		}
		for i, b := range s.Buckets {
			counts[i] += b.Count
		}
	}
	return bounds, counts
}

// gpu adds each GPU's utilization, memory used and power.
func (h *headline) gpu() []Row {
	for _, g := range []struct {
		role role
		unit string
	}{{roleGPUUtil, "%"}, {roleGPUMemUsed, "MiB"}, {roleGPUPower, "W"}} {
		name, ss := h.pick(g.role)
		for _, s := range ss {
			for _, st := range []string{"avg", "max"} {
				if v, ok := figure(s, st); ok {
					h.rows = append(h.rows, Row{Section: SectionGPU, Endpoint: h.endpoint, GPU: gpuID(s.Labels), Name: knownByName[name].friendly,
						Stat: st, Value: v, Unit: g.unit, Metric: name})
				}
			}
		}
	}
	slices.SortStableFunc(h.rows, func(a, b Row) int { return cmpGPU(a.GPU, b.GPU) })
	return h.rows
}

// gpuID names a GPU by its index label, else its UUID.
func gpuID(labels map[string]string) string {
	if id := labels["gpu"]; id != "" {
		return id
	}
	return labels["UUID"]
}

// cmpGPU orders GPU ids numerically when they are numbers.
func cmpGPU(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(a, b)
}

// bucketNote names the bucket a quantile estimate was interpolated in, in
// milliseconds (", in 0–300"): its width is the estimate's resolution, and
// a wide one (the buckets a server declares) can put the estimate far from
// every value the client measured.
func bucketNote(q float64, bounds, counts []float64) string {
	lo, hi, _, ok := quantileBucket(q, bounds, counts)
	switch {
	case !ok:
		return ""
	case math.IsInf(hi, 1):
		return fmt.Sprintf(", above %s", strconv.FormatFloat(lo*1000, 'g', 4, 64))
	}
	return fmt.Sprintf(", in %s–%s", strconv.FormatFloat(lo*1000, 'g', 4, 64), strconv.FormatFloat(hi*1000, 'g', 4, 64))
}
