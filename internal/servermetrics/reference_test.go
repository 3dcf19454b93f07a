package servermetrics

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// without is page without its lines that hold name: a scrape that left a
// family out.
func without(page, name string) string {
	var keep []string
	for _, l := range strings.SplitAfter(page, "\n") {
		if !strings.Contains(l, name) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// A counter or histogram the begin mark's scrape left out, sampled before
// it, takes its last sample before the phase as its reference: its total
// is the phase's increase (and the slices' add up to it), never its value
// since its server started, and no warning is due when that sample is
// close to the phase. A DCGM energy counter likewise.
func TestSeriesAbsentFromTheBeginMarkTakesItsLastSample(t *testing.T) {
	hist := func(n float64) [4]float64 { return [4]float64{n / 4, n / 2, n, n} }
	e := newExporter(t, exposition(1000, "", 1, hist(5000), 500))
	var clock int64
	c := collect(t, Options{Endpoints: []Target{{URL: e.url, Source: SourceServer}}, Now: func() int64 { return clock },
		SliceDuration: time.Second})
	clock = 1e8
	e.set(without(without(exposition(1010, "", 1, hist(5010), 501), "reqs_total"), "lat_seconds"))
	c.Mark("profiling", true)
	clock = 11e8
	e.set(exposition(1050, "", 1, hist(5050), 505))
	c.Mark("step", true)
	clock = 21e8
	e.set(exposition(1100, "", 1, hist(5100), 510))
	c.Mark("profiling", false)
	r := c.Stop()
	require.Empty(t, r.Warnings)

	reqs := find(t, r, "reqs", "profiling")
	assert.Empty(t, reqs.Impossible)
	assert.Equal(t, 100.0, reqs.Stats["total"], "from the baseline's 1000, not from 0")
	assert.InDelta(t, 100/2.1, reqs.Stats["rate"], 1e-9, "over the time the delta covers, from the baseline")
	var sliced float64
	for _, s := range reqs.Timeslices {
		sliced += s.Stats["total"]
	}
	assert.Equal(t, 100.0, sliced, "the first slice starts from the baseline too")

	lat := find(t, r, "lat_seconds", "profiling")
	assert.Empty(t, lat.Impossible)
	assert.Equal(t, 100.0, lat.Stats["count"])
	assert.InDelta(t, 10.0, lat.Stats["sum"], 1e-9)
	assert.Equal(t, []Bucket{{"0.1", 25}, {"0.2", 50}, {"0.5", 100}, {"+Inf", 100}}, lat.Buckets)

	const energy = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
	gpu := newExporter(t, energyExposition(TypeCounter, [2]float64{9e9, 8e9})) // mJ since boot
	clock = 0
	c = collect(t, Options{Endpoints: []Target{{URL: gpu.url, Source: SourceGPU}}, Now: func() int64 { return clock }})
	clock = 1e8
	gpu.set(without(energyExposition(TypeCounter, [2]float64{9.00003e9, 8.00002e9}), energy))
	c.Mark("profiling", true)
	clock = 21e8
	gpu.set(energyExposition(TypeCounter, [2]float64{9.0006e9, 8.0004e9}))
	c.Mark("profiling", false)
	r = c.Stop()
	require.Empty(t, r.Warnings)
	assert.Equal(t, metrics.GPUEnergy{PowerW: 500, HasPower: true, EnergyJ: 600 + 400, HasEnergy: true, Seconds: 2},
		GPUEnergy(&r), "the energy since the baseline, not since boot")
}

// A series the begin mark's scrape left out whose last sample before the
// phase is further from it than the scrapes' resolution (two intervals, or
// a tenth of the phase) would count that time as the phase's: its delta is
// refused (impossible, with why) and one warning names it, while the
// endpoint's other series stay.
func TestSeriesAbsentLongBeforeThePhaseIsRefused(t *testing.T) {
	e := newExporter(t, exposition(1000, "3", 1, [4]float64{1, 2, 3, 3}, 1))
	var clock int64
	c := collect(t, Options{Endpoints: []Target{{URL: e.url, Source: SourceServer}}, Now: func() int64 { return clock }})
	clock = int64(3 * time.Hour) // the interval is an hour: two of them pass
	e.set(without(without(exposition(5000, "9", 1, [4]float64{1, 2, 3, 3}, 1), "reqs_total"), "errs_total"))
	c.Mark("profiling", true)
	clock += 2e9
	e.set(exposition(5100, "10", 1, [4]float64{2, 4, 6, 6}, 2))
	c.Mark("profiling", false)
	r := c.Stop()

	reqs := find(t, r, "reqs", "profiling")
	assert.Equal(t, "absent from the endpoint's scrape at the beginning of phase profiling, its last sample before it "+
		"10800.0 s earlier: the delta counts that time as the phase's", reqs.Impossible)
	assert.Empty(t, reqs.Stats)
	assert.Equal(t, 4100.0, reqs.Refused["total"], "kept aside from the last sample before, never from 0")
	assert.Equal(t, "absent from the endpoint's scrape at the beginning of phase profiling, its last sample before it "+
		"10800.0 s earlier: the delta counts that time as the phase's", find(t, r, "errs", "profiling", "code=500").Impossible)
	lat := find(t, r, "lat_seconds", "profiling")
	assert.Empty(t, lat.Impossible, "sampled at the begin mark")
	assert.Equal(t, 3.0, lat.Stats["count"])
	require.Len(t, r.Warnings, 1)
	assert.Regexp(t, `^server metrics: `+regexp.QuoteMeta(r.Endpoints[0].URL)+`: (reqs|errs\{code="500"\}) \(and 1 other series\) `+
		`was absent from the endpoint's scrape at the beginning of phase profiling, its last sample before it 10800.0 s earlier`,
		r.Warnings[0], "the first series named (the parser's order), the other counted")
	assert.Contains(t, r.Warnings[0], "; left out, marked impossible")
	out := exportJSON(t, &r)
	assert.Contains(t, out, `"impossible": "absent from the endpoint's scrape`)
	assert.NotContains(t, out, `"total"`)
}
