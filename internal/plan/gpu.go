package plan

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// DefaultDCGMEnv replaces the default DCGM exporters, as AIPerf's
// environment setting of that name: a comma-separated list or a JSON
// array of URLs.
const DefaultDCGMEnv = "AIPERF_GPU_DEFAULT_DCGM_ENDPOINTS"

// defaultDCGM are AIPerf's default DCGM exporters (gpu-telemetry.md): 9400
// is dcgm-exporter's own port, 9401 the one Dynamo's and AIPerf's setups
// forward it to.
var defaultDCGM = []string{"http://localhost:9400/metrics", "http://localhost:9401/metrics"}

// GPUDashboard is the keyword of AIPerf's --gpu-telemetry that asks for
// its live GPU panel; it names no endpoint.
const GPUDashboard = "dashboard"

// DefaultDCGMEndpoints are the DCGM exporters every run looks for, as
// AIPerf does with or without --gpu-telemetry: $AIPERF_GPU_DEFAULT_DCGM_ENDPOINTS
// when set, else http://localhost:9400/metrics and :9401/metrics. Each is
// scraped only when it answers with DCGM metrics (bench's collect stage).
func DefaultDCGMEndpoints() []string {
	raw, ok := os.LookupEnv(DefaultDCGMEnv)
	if !ok {
		return defaultDCGM
	}
	var list []string
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		list = strings.Split(raw, ",")
	}
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// gpuURLs are the endpoints among the --gpu-telemetry values (keywords
// left out).
func (p *Profile) gpuURLs() []string {
	var out []string
	for _, v := range p.GPUTelemetry {
		if v != GPUDashboard {
			out = append(out, v)
		}
	}
	return out
}

// DefaultGPUTargets are the default DCGM exporters to look for (metrics
// URLs), those --gpu-telemetry names already left out; none with
// --no-gpu-telemetry.
func (p *Profile) DefaultGPUTargets() []string {
	if p.NoGPUTelemetry {
		return nil
	}
	_, named := p.ScrapeTargets()
	var out []string
	for _, raw := range DefaultDCGMEndpoints() {
		before := len(named)
		if named = appendTarget(named, raw); len(named) > before {
			out = append(out, named[len(named)-1])
		}
	}
	return out
}

// gpuValue checks one --gpu-telemetry value: an endpoint URL, or a keyword
// of AIPerf's list that this tool takes (dashboard) or says it cannot
// serve.
func (v *validator) gpuValue(raw string) (isURL bool) {
	switch {
	case raw == GPUDashboard:
		return false
	case raw == "pynvml" || raw == "amdsmi":
		v.add("gpu_telemetry", fmt.Sprintf("%s is not supported: aiperf reads GPU telemetry from DCGM exporters "+
			"(run dcgm-exporter and give its URL, e.g. --gpu-telemetry localhost:9400)", raw))
		return false
	case strings.HasSuffix(strings.ToLower(raw), ".csv"):
		v.add("gpu_telemetry", fmt.Sprintf("%q: a custom metrics file is not supported: every DCGM metric the "+
			"exporter serves is collected; give exporter URLs only", raw))
		return false
	}
	return true
}
