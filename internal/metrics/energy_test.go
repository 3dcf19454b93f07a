package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// energySummary is a profiling summary with round totals: 100 requests of
// 500 ms on average over 10 s, 3,000 input and 5,000 output tokens.
func energySummary(goodput bool) Summary {
	s := Summary{Metrics: []Metric{
		{Tag: TagRequestLatency, Stats: &Stats{Avg: 500, Count: 100}},
		{Tag: TagOutputTokenThroughput, Value: 50},
		{Tag: TagRequestThroughput, Value: 10},
		{Tag: TagRequestCount, Value: 100},
		{Tag: TagTotalISL, Value: 3000},
		{Tag: TagTotalOSL, Value: 5000},
		{Tag: TagBenchmarkDuration, Value: 10},
	}}
	if goodput {
		s.Metrics = append(s.Metrics, Metric{Tag: TagGoodput, Value: 8})
	}
	return s
}

func energyValues(s Summary) map[string]float64 {
	out := map[string]float64{}
	for _, m := range s.Metrics {
		if GroupOf(m.Tag) == GroupPowerNVIDIA {
			out[m.Tag] = m.Value
		}
	}
	return out
}

// TestAddEnergyFromTheCounter: with DCGM's energy counter, AIPerf's
// formulas (its analyzer's own test figures).
func TestAddEnergyFromTheCounter(t *testing.T) {
	s := energySummary(true)
	AddEnergy(&s, GPUEnergy{PowerW: 200, HasPower: true, EnergyJ: 1000, HasEnergy: true}, 8)
	assert.InDeltaMapValues(t, map[string]float64{
		TagTotalGPUPower:        200,
		TagAverageGPUPower:      100,  // 1000 J / 10 s
		TagTotalGPUEnergy:       1000, // the counters' increase
		TagOutputTokensPerJoule: 5,    // 5000 / 1000
		TagEnergyPerOutputToken: 200,  // 1000 × 1000 / 5000 mJ
		TagEnergyPerTotalToken:  125,  // 1e6 / 8000
		TagEnergyPerRequest:     10,
		TagEnergyPerUser:        125, // 1000 / 8
		TagEnergyDelayProduct:   5,   // 10 J × 0.5 s
		TagPerformancePerWatt:   0.1, // 10 / 100
		TagOutputTPSPerWatt:     0.5,
		TagGoodputPerWatt:       0.08,
	}, energyValues(s), 1e-12)
	var order []string
	for _, m := range s.InGroup(GroupPowerNVIDIA) {
		order = append(order, m.Tag)
		assert.NotEmpty(t, m.Header)
		assert.Equal(t, UnitOf(m.Tag), m.Unit)
	}
	assert.Equal(t, []string{TagEnergyDelayProduct, TagPerformancePerWatt, TagOutputTPSPerWatt, TagGoodputPerWatt,
		TagAverageGPUPower, TagTotalGPUEnergy, TagTotalGPUPower, TagEnergyPerTotalToken, TagEnergyPerOutputToken,
		TagEnergyPerRequest, TagOutputTokensPerJoule, TagEnergyPerUser}, order)
}

// TestAddEnergyWithoutTheCounter: only the power gauge: the energy is the
// power over the benchmark duration, the average power the total power;
// no concurrency, no energy per user; no --goodput, no goodput per watt.
func TestAddEnergyWithoutTheCounter(t *testing.T) {
	s := energySummary(false)
	AddEnergy(&s, GPUEnergy{PowerW: 150, HasPower: true}, 0)
	got := energyValues(s)
	assert.InDelta(t, 1500, got[TagTotalGPUEnergy], 1e-12)
	assert.InDelta(t, 150, got[TagAverageGPUPower], 1e-12)
	assert.InDelta(t, 10.0/150, got[TagPerformancePerWatt], 1e-12)
	assert.NotContains(t, got, TagEnergyPerUser)
	assert.NotContains(t, got, TagGoodputPerWatt)

	s = energySummary(false)
	AddEnergy(&s, GPUEnergy{PowerW: 150, HasPower: true, EnergyJ: 1000, HasEnergy: true, Seconds: 12.5}, 0)
	assert.InDelta(t, 80, energyValues(s)[TagAverageGPUPower], 1e-12, "over the telemetry's 12.5 s window, not the 10 s benchmark")

	none := energySummary(true)
	AddEnergy(&none, GPUEnergy{}, 8)
	assert.Empty(t, energyValues(none), "no GPU reported power or energy")
}

// TestAddEnergyRefusesWhatUntrueFiguresSum: a metric summed from a GPU
// figure that cannot be is left out, not given as a number, and a warning
// says which and why: Total GPU Power from the power gauges, the others
// from the energy counters, or from the power when there is no counter.
func TestAddEnergyRefusesWhatUntrueFiguresSum(t *testing.T) {
	s := energySummary(true)
	warnings := AddEnergy(&s, GPUEnergy{PowerW: 200, HasPower: true, EnergyJ: 1000, HasEnergy: true, PowerUntrue: "GPU 1 draws 50,000 W"}, 8)
	got := energyValues(s)
	assert.NotContains(t, got, TagTotalGPUPower)
	assert.InDelta(t, 1000, got[TagTotalGPUEnergy], 1e-12, "the counters are true")
	assert.Len(t, got, 11)
	assert.Equal(t, []string{"GPU power efficiency: Total GPU Power left out of the console, the exports and the store: " +
		"they would sum a GPU figure that cannot be what it measured (GPU 1 draws 50,000 W)"}, warnings)

	s = energySummary(true)
	warnings = AddEnergy(&s, GPUEnergy{PowerW: 200, HasPower: true, EnergyJ: 1000, HasEnergy: true, EnergyUntrue: "GPU 1's counter fell"}, 8)
	assert.Equal(t, map[string]float64{TagTotalGPUPower: 200}, energyValues(s))
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "Energy Delay Product, Performance per Watt, Output Tokens per Second per Watt, Goodput per Watt, "+
		"Average GPU Power, Total GPU Energy, Energy per Total Token, Energy per Output Token, Energy per Request, "+
		"Output Tokens per Joule, Energy per User left out")
	assert.Contains(t, warnings[0], "(GPU 1's counter fell)")

	s = energySummary(false)
	warnings = AddEnergy(&s, GPUEnergy{PowerW: 150, HasPower: true, PowerUntrue: "GPU 1 draws 50,000 W"}, 8)
	assert.Empty(t, energyValues(s), "without a counter the energy is the power over the phase")
	assert.Len(t, warnings, 2)

	s = energySummary(false)
	assert.Empty(t, AddEnergy(&s, GPUEnergy{PowerW: 150, HasPower: true}, 8), "nothing untrue, nothing said")
	assert.Len(t, energyValues(s), 11)
}
