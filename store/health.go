package store

import (
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
)

// The client's self-check (result.Health) is kept in run_stats under the
// audit phase, one scalar per figure (stat "value").
const (
	healthSchedP50 = "sched_latency_p50"
	healthSchedP99 = "sched_latency_p99"
	healthSchedMax = "sched_latency_max"
	healthCPU      = "client_cpu"
	healthCores    = "client_cores"
	healthHostCPU  = "host_cpu"
)

// healthMetrics are the rows of h; none for nil.
func healthMetrics(h *result.Health) []metrics.Metric {
	if h == nil {
		return nil
	}
	ms := []metrics.Metric{
		{Tag: healthSchedP50, Header: "Client Scheduling Latency p50", Unit: metrics.UnitMs, Value: h.SchedLatencyP50Ms},
		{Tag: healthSchedP99, Header: "Client Scheduling Latency p99", Unit: metrics.UnitMs, Value: h.SchedLatencyP99Ms},
		{Tag: healthSchedMax, Header: "Client Scheduling Latency max", Unit: metrics.UnitMs, Value: h.SchedLatencyMaxMs},
		{Tag: healthCPU, Header: "Client CPU", Unit: "%", Value: h.ProcessCPUPct},
		{Tag: healthCores, Header: "Client Cores", Unit: "cores", Value: float64(h.Cores)},
	}
	if h.HostCPUPct != nil {
		ms = append(ms, metrics.Metric{Tag: healthHostCPU, Header: "Host CPU", Unit: "%", Value: *h.HostCPUPct})
	}
	return ms
}

// loadHealth sets the figure tag of the audit's Health.
func loadHealth(a *result.Audit, tag string, v float64) {
	if a.Health == nil {
		a.Health = &result.Health{}
	}
	switch h := a.Health; tag {
	case healthSchedP50:
		h.SchedLatencyP50Ms = v
	case healthSchedP99:
		h.SchedLatencyP99Ms = v
	case healthSchedMax:
		h.SchedLatencyMaxMs = v
	case healthCPU:
		h.ProcessCPUPct = v
	case healthCores:
		h.Cores = int(v)
	case healthHostCPU:
		h.HostCPUPct = &v
	}
}
