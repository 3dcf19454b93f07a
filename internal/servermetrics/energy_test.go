package servermetrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// energyExposition is two GPUs drawing 300 W and 200 W whose energy counters
// (mJ) stand at mj[0] and mj[1], the counter declared as typ.
func energyExposition(typ string, mj [2]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
	for g, w := range []float64{300, 200} {
		fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\"} %g\n", g, g, w)
	}
	fmt.Fprintf(&b, "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n"+
		"# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION %s\n", typ)
	for g := range 2 {
		fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\",UUID=\"GPU-%d\"} %g\n", g, g, mj[g])
	}
	return b.String()
}

// TestGPUEnergyOverTheProfilingPhase: the GPUs' average power summed, and
// their energy counters' increase over the profiling phase in joules
// (before it and after it left out), whether the exporter declares the
// counter a counter or a gauge.
func TestGPUEnergyOverTheProfilingPhase(t *testing.T) {
	for _, typ := range []string{TypeCounter, TypeGauge} {
		t.Run(typ, func(t *testing.T) {
			gpu := newExporter(t, energyExposition(typ, [2]float64{1e6, 1e3}))
			var clock int64
			c := collect(t, Options{Endpoints: []Target{{URL: gpu.url, Source: SourceGPU}}, Now: func() int64 { return clock }})
			clock = 1e9
			gpu.set(energyExposition(typ, [2]float64{5e6, 2e3})) // before the phase: not counted
			c.Mark("profiling", true)
			clock = 3e9
			gpu.set(energyExposition(typ, [2]float64{5.9e6, 102e3}))
			c.Mark("profiling", false)
			clock = 4e9
			gpu.set(energyExposition(typ, [2]float64{9e6, 9e6})) // after it: not counted
			r := c.Stop()
			assert.Equal(t, metrics.GPUEnergy{PowerW: 500, HasPower: true, EnergyJ: 900 + 100, HasEnergy: true, Seconds: 2},
				GPUEnergy(&r), "the phase ran 2 s on the run's clock")
		})
	}
	assert.Equal(t, metrics.GPUEnergy{}, GPUEnergy(nil))
}

// TestGPUEnergySaysWhatIsUntrue: a GPU drawing 50,000 W (no GPU can) whose
// energy counter falls on every scrape is left out of both sums, and
// PowerUntrue and EnergyUntrue say why, naming it: a sum over the other
// GPU alone would pass for the GPUs' own.
func TestGPUEnergySaysWhatIsUntrue(t *testing.T) {
	exposition := func(i int) string {
		var b strings.Builder
		b.WriteString("# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
		for g, w := range []int{300, 50_000} {
			fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\"} %d\n", g, g, w)
		}
		b.WriteString("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n")
		for g, mj := range []int{1e6 + i*1e5, 1e9 - i*1e3} {
			fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\",UUID=\"GPU-%d\"} %d\n", g, g, mj)
		}
		return b.String()
	}
	gpu := newExporter(t, exposition(0))
	var clock int64
	c := collect(t, Options{Endpoints: []Target{{URL: gpu.url, Source: SourceGPU}}, Now: func() int64 { return clock }})
	gpu.set(exposition(1))
	clock = 1e9
	c.Mark("profiling", true)
	gpu.set(exposition(2))
	clock = 3e9
	c.Mark("profiling", false)
	r := c.Stop()
	e := GPUEnergy(&r)
	assert.Equal(t, 300.0, e.PowerW, "GPU 1's power left out")
	assert.True(t, e.HasPower)
	assert.Equal(t, gpu.url+" GPU 1 DCGM_FI_DEV_POWER_USAGE: avg 50,000.00 W, above 10000 W for one GPU", e.PowerUntrue)
	assert.True(t, e.HasEnergy, "an energy sum, untrue: not a sum without a counter")
	assert.Contains(t, e.EnergyUntrue, gpu.url+" GPU 1 DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION: the counter fell 2 times")
}
