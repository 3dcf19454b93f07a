package servermetrics

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/csvcell"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/numfmt"
)

// gpuField maps a DCGM field to AIPerf's GPU telemetry metric: its name,
// display name, unit and the factor from DCGM's unit to it
// (src/aiperf/gpu_telemetry/constants.py and metrics_config.py; the names
// carry AIPerf's nvidia_ platform prefix, docs/tutorials/gpu-telemetry.md).
type gpuField struct {
	dcgm, name, display, unit string
	scale                     float64
}

var gpuFields = []gpuField{
	{"DCGM_FI_DEV_POWER_USAGE", "nvidia_power_usage", "NVIDIA GPU Power Usage", "W", 1},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "nvidia_energy_consumption", "NVIDIA Energy Consumption", "MJ", 1e-9},
	{"DCGM_FI_DEV_GPU_UTIL", "nvidia_gpu_utilization", "NVIDIA GPU Utilization", "%", 1},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", "nvidia_memory_utilization", "NVIDIA Memory Utilization", "%", 1},
	{"DCGM_FI_DEV_FB_USED", "nvidia_memory_used", "NVIDIA GPU Memory Used", "GB", 1.048576e-3},
	{"DCGM_FI_DEV_FB_FREE", "nvidia_fb_free", "Framebuffer Memory Free", "MB", 1.048576},
	{"DCGM_FI_DEV_FB_TOTAL", "nvidia_fb_total", "Total Framebuffer Memory", "MB", 1.048576},
	{"DCGM_FI_DEV_SM_CLOCK", "nvidia_sm_clock", "SM Clock Frequency", "MHz", 1},
	{"DCGM_FI_DEV_MEM_CLOCK", "nvidia_mem_clock", "Memory Clock Frequency", "MHz", 1},
	{"DCGM_FI_DEV_MEMORY_TEMP", "nvidia_memory_temp", "Memory Temperature", "°C", 1},
	{"DCGM_FI_DEV_GPU_TEMP", "nvidia_temperature", "NVIDIA GPU Temperature", "°C", 1},
	{"DCGM_FI_DEV_ENC_UTIL", "nvidia_encoder_utilization", "NVIDIA Encoder Utilization", "%", 1},
	{"DCGM_FI_DEV_DEC_UTIL", "nvidia_decoder_utilization", "NVIDIA Decoder Utilization", "%", 1},
	{"DCGM_FI_PROF_SM_ACTIVE", "nvidia_sm_utilization", "NVIDIA SM Utilization", "%", 100},
	{"DCGM_FI_DEV_XID_ERRORS", "nvidia_xid_errors", "NVIDIA XID Errors", "count", 1},
	{"DCGM_FI_DEV_POWER_VIOLATION", "nvidia_power_violation", "NVIDIA Power Violation", "us", 1},
}

// helpUnit finds "(in UNIT)" in a DCGM help text.
var helpUnit = regexp.MustCompile(`\(in\s+([^\s)]+)\)`)

// gpuFieldOf is the field of a DCGM family; one not in the table is named
// as AIPerf names a custom field: nvidia_ and the lower-case field name,
// its display the help text before "(", its unit the help's "(in UNIT)".
func gpuFieldOf(name, help string) gpuField {
	for _, f := range gpuFields {
		if f.dcgm == name {
			return f
		}
	}
	suffix := strings.TrimPrefix(strings.TrimPrefix(name, "DCGM_FI_DEV_"), "DCGM_FI_PROF_")
	f := gpuField{dcgm: name, name: "nvidia_" + strings.ToLower(suffix), unit: "count", scale: 1}
	f.display, _, _ = strings.Cut(help, "(")
	if f.display = strings.TrimSpace(f.display); f.display == "" {
		f.display = name
	}
	if m := helpUnit.FindStringSubmatch(help); m != nil {
		f.unit = m[1]
	}
	return f
}

// gpuKey identifies a GPU of an endpoint.
type gpuKey struct{ endpoint, uuid, index string }

// gpuOf is the GPU a series belongs to.
func gpuOf(endpoint string, l map[string]string) gpuKey {
	return gpuKey{endpoint: endpoint, uuid: l["UUID"], index: l["gpu"]}
}

// gpuGroups are the GPU series of phase grouped by endpoint and GPU, in
// endpoint order and GPU index order.
func gpuGroups(r *Result, phase string) ([]gpuKey, map[gpuKey][]Series) {
	groups := map[gpuKey][]Series{}
	var keys []gpuKey
	for _, s := range exported(r, SourceGPU, phase) {
		k := gpuOf(s.Endpoint, s.Labels)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	rank := map[string]int{}
	for i, e := range r.Endpoints {
		rank[e.URL] = i
	}
	slices.SortStableFunc(keys, func(a, b gpuKey) int {
		return cmp.Or(cmp.Compare(rank[a.endpoint], rank[b.endpoint]), cmpGPU(a.index, b.index), cmp.Compare(a.uuid, b.uuid))
	})
	for _, k := range keys {
		ss := groups[k]
		slices.SortStableFunc(ss, func(a, b Series) int { return cmp.Compare(gpuRank(a.Metric), gpuRank(b.Metric)) })
	}
	return keys, groups
}

// gpuRank orders the fields as AIPerf's table does, the others after.
func gpuRank(name string) int {
	for i, f := range gpuFields {
		if f.dcgm == name {
			return i
		}
	}
	return len(gpuFields)
}

// gpuStatKeys are the stats of a GPU metric, in AIPerf's order (its
// STAT_KEYS: sum after max).
var gpuStatKeys = []string{"avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// gpuJSONKeys are the stats of a GPU metric in the JSON export: as
// profile_export_aiperf.json's record metrics, count and sum last; then a
// counter's total and rate (an extension).
var gpuJSONKeys = []string{"avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std", "count", "sum",
	"total", "rate"}

// scaled is a gauge's stats in the field's unit (the count stays), with
// the sum of its samples (AIPerf's np.sum of the time series) when it has
// both an average and a count; a counter's (the energy consumed) has its
// increase over the phase as its sum.
func scaled(st map[string]float64, scale float64) map[string]float64 {
	out := make(map[string]float64, len(st)+1)
	for k, v := range st {
		if k != "count" {
			v *= scale
		}
		out[k] = v
	}
	avg, okAvg := out["avg"]
	n, okN := out["count"]
	total, okTotal := out["total"]
	switch _, ok := out["sum"]; {
	case ok:
	case okAvg && okN:
		out["sum"] = avg * n
	case okTotal:
		out["sum"] = total
	}
	return out
}

// WriteGPUJSON writes the GPU telemetry of phase ("" for the profiling
// span) as AIPerf's "telemetry_data" object of profile_export_aiperf.json:
// a summary, and per endpoint (host:port) and GPU ("gpu_<index>") its
// identity and each metric's stats (avg, min, max, p1 … p99, std, count,
// sum, unit) in AIPerf's units (power W, memory used GB, framebuffer MB, …).
func WriteGPUJSON(w io.Writer, r *Result, phase string, m Meta) error {
	keys, groups := gpuGroups(r, phase)
	endpoints := object{}
	byEndpoint := map[string]object{}
	var order []string
	for _, k := range keys {
		ss := groups[k]
		metrics := object{}
		for _, s := range ss {
			f := gpuFieldOf(s.Metric, s.Description)
			o := ordered(scaled(s.Stats, f.scale), gpuJSONKeys)
			metrics = append(metrics, field{f.name, append(o, field{"unit", f.unit})})
		}
		l := ss[0].Labels
		index, _ := strconv.Atoi(k.index)
		gpu := object{{"gpu_index", index}, {"gpu_name", l["modelName"]}, {"gpu_uuid", k.uuid}, {"platform", "nvidia"},
			{"hostname", l["Hostname"]}, {"metrics", metrics}}
		ep := displayEndpoint(k.endpoint)
		if byEndpoint[ep] == nil {
			order = append(order, ep)
		}
		byEndpoint[ep] = append(byEndpoint[ep], field{"gpu_" + k.index, gpu})
	}
	for _, ep := range order {
		endpoints = append(endpoints, field{ep, object{{"gpus", byEndpoint[ep]}}})
	}
	return encode(w, object{{"summary", summary(r, SourceGPU, m, false)}, {"endpoints", endpoints}})
}

// WriteGPUCSV writes the GPU telemetry section AIPerf appends to
// profile_export_aiperf.csv (_write_telemetry_section): Endpoint,
// GPU_Index, GPU_Name, GPU_UUID, Platform, Metric ("NVIDIA GPU Power Usage
// (W)"), avg, min, max, sum, p1 … p99, std, two decimals, then Hostname
// when any GPU has one (AIPerf's optional column; a GPU without one has
// "None" there, Python's str(None)). Lines end in CRLF, as Python's csv
// module writes them; every cell goes through csvcell (the exporter names
// the index, name, UUID, host and a custom field's help text).
func WriteGPUCSV(w io.Writer, r *Result, phase string) error {
	keys, groups := gpuGroups(r, phase)
	hosts := slices.ContainsFunc(keys, func(k gpuKey) bool { return groups[k][0].Labels["Hostname"] != "" })
	cw := csvcell.NewWriter(w)
	cw.UseCRLF = true
	header := append([]string{"Endpoint", "GPU_Index", "GPU_Name", "GPU_UUID", "Platform", "Metric"}, gpuStatKeys...)
	if hosts {
		header = append(header, "Hostname")
	}
	_ = cw.Write(header)
	for _, k := range keys {
		host := groups[k][0].Labels["Hostname"]
		if host == "" {
			host = "None"
		}
		for _, s := range groups[k] {
			f := gpuFieldOf(s.Metric, s.Description)
			st := scaled(s.Stats, f.scale)
			row := []string{displayEndpoint(k.endpoint), k.index, s.Labels["modelName"], k.uuid, "nvidia", f.display + " (" + f.unit + ")"}
			for _, key := range gpuStatKeys {
				v, ok := st[key]
				row = append(row, "")
				if ok {
					row[len(row)-1] = numfmt.Fixed(v, 2)
				}
			}
			if hosts {
				row = append(row, host)
			}
			_ = cw.Write(row)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write GPU telemetry CSV: %w", err)
	}
	return nil
}

// WriteGPUJSONL writes AIPerf's gpu_telemetry_export.jsonl: one line per
// retained scrape per GPU, its identity, timestamp_ns (wall clock),
// dcgm_url and telemetry_data, the metrics in AIPerf's units.
func WriteGPUJSONL(w io.Writer, r *Result, m Meta) error {
	if r.timeline == nil {
		return ErrNoSamples
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for ei, b := range r.timeline.endpoints {
		if r.Endpoints[ei].Source != SourceGPU {
			continue
		}
		gpus := map[gpuKey][]*seriesBuf{}
		var keys []gpuKey
		for _, s := range b.order {
			if s.vals == nil {
				continue
			}
			k := gpuOf("", s.labels)
			if gpus[k] == nil {
				keys = append(keys, k)
			}
			gpus[k] = append(gpus[k], s)
		}
		slices.SortStableFunc(keys, func(a, b gpuKey) int { return cmp.Or(cmpGPU(a.index, b.index), cmp.Compare(a.uuid, b.uuid)) })
		for _, ss := range gpus {
			slices.SortStableFunc(ss, func(a, b *seriesBuf) int { return cmp.Compare(gpuRank(a.fam.name), gpuRank(b.fam.name)) })
		}
		for i, t := range b.times {
			for _, k := range keys {
				data := object{}
				for _, s := range gpus[k] {
					if v := s.vals[i]; !math.IsNaN(v) {
						f := gpuFieldOf(s.fam.name, s.fam.help)
						data = append(data, field{f.name, v * f.scale})
					}
				}
				if len(data) == 0 {
					continue
				}
				l := gpus[k][0].labels
				index, _ := strconv.Atoi(k.index)
				line := object{{"gpu_index", index}, {"gpu_uuid", k.uuid}, {"gpu_model_name", l["modelName"]}, {"pci_bus_id", l["pci_bus_id"]},
					{"device", l["device"]}, {"hostname", l["Hostname"]}, {"timestamp_ns", m.wall(t)}, {"dcgm_url", r.Endpoints[ei].URL},
					{"telemetry_data", data}}
				if err := enc.Encode(line); err != nil {
					return fmt.Errorf("write GPU telemetry JSONL: %w", err)
				}
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write GPU telemetry JSONL: %w", err)
	}
	return nil
}

// DCGM's power gauge (W) and energy counter (mJ since boot).
const (
	dcgmPower  = "DCGM_FI_DEV_POWER_USAGE"
	dcgmEnergy = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
)

// GPUEnergy sums what the GPUs of every DCGM endpoint say of the profiling
// span: their average power draw, and their energy counters' increase in
// joules (an exporter that declares the counter a gauge gives its
// max − min, the increase of a counter that only grows), with the span's
// length when it is one marked phase. A GPU whose power series cannot be
// (impossible, or a draw no GPU reaches, which the console marks (!)) or
// whose energy counter is impossible makes the sum untrue: PowerUntrue or
// EnergyUntrue says why, and its figure is left out of the sum. A nil
// result, or one without GPU telemetry, is zero.
func GPUEnergy(r *Result) metrics.GPUEnergy {
	var e metrics.GPUEnergy
	if r == nil {
		return e
	}
	for _, p := range r.Phases {
		if p.Name == r.Span && r.Span != PhaseSpan && p.EndNs > p.BeginNs {
			e.Seconds = float64(p.EndNs-p.BeginNs) / 1e9
		}
	}
	for _, s := range exported(r, SourceGPU, "") {
		switch s.Metric {
		case dcgmPower:
			why := untruePower(s)
			e.PowerUntrue = cmp.Or(e.PowerUntrue, why)
			if v, ok := s.Stats["avg"]; ok && why == "" {
				e.PowerW, e.HasPower = e.PowerW+v, true
			}
		case dcgmEnergy:
			joules, ok := energyIncrease(s)
			if s.Impossible != "" {
				e.EnergyUntrue = cmp.Or(e.EnergyUntrue, gpuName(s)+": "+s.Impossible)
				e.HasEnergy = true // the sum covers every GPU, or it is none
			} else if ok {
				e.EnergyJ, e.HasEnergy = e.EnergyJ+joules, true
			}
		}
	}
	return e
}

// energyIncrease is a GPU's energy counter's increase over the span, J.
func energyIncrease(s Series) (float64, bool) {
	total, ok := s.Stats["total"]
	if s.Type != TypeCounter {
		hi, okHi := s.Stats["max"]
		lo, okLo := s.Stats["min"]
		total, ok = hi-lo, okHi && okLo
	}
	return total / 1e3, ok
}

// untruePower says why a GPU's power series cannot be what it drew: the
// series is impossible, or a sample's figure is one no GPU reports.
func untruePower(s Series) string {
	if s.Impossible != "" {
		return gpuName(s) + ": " + s.Impossible
	}
	for _, k := range []string{"avg", "max", "min"} {
		if v, ok := s.Stats[k]; ok {
			if why := impossible(Row{Value: v, Unit: "W"}); why != "" {
				return fmt.Sprintf("%s: %s %s W, %s", gpuName(s), k, numfmt.Grouped(v, 2), why)
			}
		}
	}
	return ""
}

// gpuName names a GPU's series: its endpoint, the GPU and the field.
func gpuName(s Series) string {
	return fmt.Sprintf("%s GPU %s %s", s.Endpoint, gpuID(s.Labels), s.Metric)
}
