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
