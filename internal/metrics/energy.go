package metrics

import (
	"fmt"
	"slices"
	"strings"
)

// AIPerf's NVIDIA GPU power-efficiency metrics (power_efficiency_metrics.py),
// from DCGM's power gauge and energy counter over the profiling phase.
const (
	TagEnergyDelayProduct   = "nvidia_energy_delay_product"
	TagPerformancePerWatt   = "nvidia_performance_per_watt"
	TagOutputTPSPerWatt     = "nvidia_output_tps_per_watt"
	TagGoodputPerWatt       = "nvidia_goodput_per_watt"
	TagAverageGPUPower      = "nvidia_average_gpu_power"
	TagTotalGPUEnergy       = "nvidia_total_gpu_energy"
	TagTotalGPUPower        = "nvidia_total_gpu_power"
	TagEnergyPerTotalToken  = "nvidia_energy_per_total_token"
	TagEnergyPerOutputToken = "nvidia_energy_per_output_token"
	TagEnergyPerRequest     = "nvidia_energy_per_request"
	TagOutputTokensPerJoule = "nvidia_output_tokens_per_joule"
	TagEnergyPerUser        = "nvidia_energy_per_user"
)

var (
	defEnergyDelay          = def{TagEnergyDelayProduct, "Energy Delay Product", "J*s"}
	defPerfPerWatt          = def{TagPerformancePerWatt, "Performance per Watt", "requests/sec/W"}
	defOutputTPSPerWatt     = def{TagOutputTPSPerWatt, "Output Tokens per Second per Watt", "tokens/sec/W"}
	defGoodputPerWatt       = def{TagGoodputPerWatt, "Goodput per Watt", "good-req/s/W"}
	defAveragePower         = def{TagAverageGPUPower, "Average GPU Power", "W"}
	defTotalEnergy          = def{TagTotalGPUEnergy, "Total GPU Energy", "J"}
	defTotalPower           = def{TagTotalGPUPower, "Total GPU Power", "W"}
	defEnergyPerTotalToken  = def{TagEnergyPerTotalToken, "Energy per Total Token", "mJ/token"}
	defEnergyPerOutputToken = def{TagEnergyPerOutputToken, "Energy per Output Token", "mJ/token"}
	defEnergyPerRequest     = def{TagEnergyPerRequest, "Energy per Request", "joules/request"}
	defTokensPerJoule       = def{TagOutputTokensPerJoule, "Output Tokens per Joule", "tokens/J"}
	defEnergyPerUser        = def{TagEnergyPerUser, "Energy per User", "joules/user"}
)

// GPUEnergy is what the NVIDIA GPUs' telemetry says of the profiling phase,
// summed over the GPUs: their average power draw (DCGM_FI_DEV_POWER_USAGE)
// and the increase of their energy counters
// (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION), each when some GPU reported it.
type GPUEnergy struct {
	PowerW    float64
	HasPower  bool
	EnergyJ   float64
	HasEnergy bool
	// Seconds is the window the telemetry covers, the profiling phase as
	// marked; 0 when unknown (the benchmark duration stands in for it).
	Seconds float64
	// PowerUntrue and EnergyUntrue say why a GPU's power draw or energy
	// counter cannot be what it measured (its series refused as
	// impossible, a figure no GPU reaches), or "": a metric summed from
	// them is refused.
	PowerUntrue, EnergyUntrue string
}

// AddEnergy appends AIPerf's GPU power-efficiency metrics to s, a
// profiling summary, as its EnergyEfficiencyAnalyzer derives them: the
// energy is the counters' increase, or without a counter the power times
// benchmark_duration (and the average power the total power); each metric
// only when what it divides by is there and not zero (energy per user
// needs the phase's concurrency, goodput per watt --goodput). Nothing is
// added when the GPUs reported neither power nor energy. A metric summed
// from an untrue figure (g's PowerUntrue or EnergyUntrue) is left out, not
// given as a true number, and a returned warning says which and why.
func AddEnergy(s *Summary, g GPUEnergy, concurrency int) []string {
	value := func(tag string) (float64, bool) {
		m, ok := s.Get(tag)
		return m.Value, ok
	}
	duration := g.Seconds
	if duration <= 0 {
		duration, _ = value(TagBenchmarkDuration)
	}
	energy, avgPower := g.EnergyJ, 0.0
	switch {
	case g.HasEnergy && duration > 0:
		avgPower = energy / duration
	case g.HasEnergy:
	case g.HasPower && duration > 0:
		energy, avgPower = g.PowerW*duration, g.PowerW
	default:
		return nil
	}
	var out []Metric
	add := func(d def, v float64) {
		out = append(out, Metric{Tag: d.tag, Header: d.header, Unit: d.unit, Value: v})
	}
	requests, _ := value(TagRequestCount)
	osl, hasOSL := value(TagTotalOSL)
	isl, _ := value(TagTotalISL)
	perRequest := 0.0
	if requests > 0 {
		perRequest = energy / requests
		if lat, ok := s.Get(TagRequestLatency); ok && lat.Stats != nil {
			add(defEnergyDelay, perRequest*lat.Stats.Avg/1e3)
		}
	}
	if avgPower > 0 {
		for _, w := range []struct {
			d   def
			tag string
		}{{defPerfPerWatt, TagRequestThroughput}, {defOutputTPSPerWatt, TagOutputTokenThroughput}, {defGoodputPerWatt, TagGoodput}} {
			if v, ok := value(w.tag); ok {
				add(w.d, v/avgPower)
			}
		}
		add(defAveragePower, avgPower)
	}
	add(defTotalEnergy, energy)
	if g.HasPower {
		add(defTotalPower, g.PowerW)
	}
	if isl+osl > 0 {
		add(defEnergyPerTotalToken, energy*1e3/(isl+osl))
	}
	if hasOSL && osl > 0 {
		add(defEnergyPerOutputToken, energy*1e3/osl)
	}
	if requests > 0 {
		add(defEnergyPerRequest, perRequest)
	}
	if hasOSL && energy > 0 {
		add(defTokensPerJoule, osl/energy)
	}
	if concurrency > 0 {
		add(defEnergyPerUser, energy/float64(concurrency))
	}
	kept, warnings := refuseUntrue(out, g)
	s.Metrics = append(s.Metrics, kept...)
	return warnings
}

// refuseUntrue leaves out of out the metrics summed from an untrue figure:
// Total GPU Power from the power gauges, the others from the energy (the
// counters, or the power without one), and says which and why.
func refuseUntrue(out []Metric, g GPUEnergy) ([]Metric, []string) {
	energyWhy := g.EnergyUntrue
	if !g.HasEnergy {
		energyWhy = g.PowerUntrue // the energy is the power over the phase
	}
	var warnings []string
	for _, r := range []struct {
		why   string
		power bool
	}{{g.PowerUntrue, true}, {energyWhy, false}} {
		if r.why == "" {
			continue
		}
		var left []string
		out = slices.DeleteFunc(out, func(m Metric) bool {
			if (m.Tag == TagTotalGPUPower) != r.power {
				return false
			}
			left = append(left, m.Header)
			return true
		})
		if len(left) > 0 {
			warnings = append(warnings, fmt.Sprintf("GPU power efficiency: %s left out of the console, the exports and the store: "+
				"they would sum a GPU figure that cannot be what it measured (%s)", strings.Join(left, ", "), r.why))
		}
	}
	return out, warnings
}
