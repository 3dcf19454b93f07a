package mock

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/kvcache"
)

// The synthetic GPUs of --gpu-metrics: an 80 GB card whose framebuffer is
// mostly taken by the weights and the preallocated KV cache, as under vLLM
// (constant), and whose utilisation, power, SM clock and temperature rise
// linearly with its load.
const (
	gpuModel      = "NVIDIA H100 80GB HBM3"
	gpuDriver     = "550.54.15"
	gpuFBTotalMiB = 81559
	gpuFBUsedMiB  = 73403 // vLLM's default --gpu-memory-utilization 0.9
	gpuIdleWatts  = 70.0
	gpuMaxWatts   = 700.0
	gpuIdleMHz    = 345
	gpuMaxMHz     = 1980
	gpuIdleC      = 32
	gpuMaxC       = 72
	// gpuSaturation is the number of running requests that loads the GPUs
	// fully without --max-num-seqs.
	gpuSaturation = 16
)

// gpuLoad is the GPUs' load, 0 to 1: the running requests over
// --max-num-seqs (or gpuSaturation without it). Tensor parallelism loads
// every GPU alike.
func (s *Server) gpuLoad() float64 {
	running, _ := s.sched.counts()
	full := s.cfg.MaxNumSeqs
	if full == 0 {
		full = gpuSaturation
	}
	return min(1, float64(running)/float64(full))
}

// serveDCGM answers GET /dcgm/metrics like dcgm-exporter's default
// counters, one series per synthetic GPU with its labels, integers
// without a decimal point; the energy counter grows by the power each
// scrape reads, held until the next one (gpuMeter).
func (s *Server) serveDCGM(w http.ResponseWriter, _ *http.Request) {
	load := s.gpuLoad()
	lerp := func(lo, hi float64) float64 { return lo + (hi-lo)*load }
	var b strings.Builder
	family := func(name, typ, help string, v float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for i := range s.cfg.GPUs {
			fmt.Fprintf(&b, "%s{%s} %s\n", name, s.gpuLabels(i), strconv.FormatFloat(v, 'f', -1, 64))
		}
	}
	metric := func(name, help string, v float64) { family(name, "gauge", help, v) }
	watts := math.Round(lerp(gpuIdleWatts, gpuMaxWatts)*1000) / 1000
	metric("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", math.Round(lerp(gpuIdleMHz, gpuMaxMHz)))
	metric("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", math.Round(lerp(gpuIdleC, gpuMaxC)))
	metric("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", watts)
	family("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).",
		math.Round(s.energy.read(time.Now(), watts)))
	metric("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", math.Round(100*load))
	metric("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", gpuFBTotalMiB-gpuFBUsedMiB)
	metric("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", gpuFBUsedMiB)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// gpuMeter is the synthetic GPUs' energy counter: each read adds the
// power of the previous read over the time since (the first read starts
// it at 0 mJ).
type gpuMeter struct {
	mu    sync.Mutex
	at    time.Time
	watts float64
	mJ    float64
}

// read advances the counter to now, where the power is watts, and
// returns it in mJ.
func (m *gpuMeter) read(now time.Time, watts float64) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.at.IsZero() {
		m.mJ += m.watts * now.Sub(m.at).Seconds() * 1e3
	}
	m.at, m.watts = now, watts
	return m.mJ
}

// gpuLabels returns GPU i's labels as dcgm-exporter writes them; the UUID
// is fixed per index, so series are stable across restarts.
func (s *Server) gpuLabels(i int) string {
	u, v := kvcache.Mix(uint64(i)+0x6d6f636b), kvcache.Mix(uint64(i)+0x67707573)
	uuid := fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", u>>32, u>>16&0xffff, u&0xffff, v>>48, v&0xffffffffffff)
	return fmt.Sprintf(`gpu="%d",UUID="%s",pci_bus_id="00000000:%02X:00.0",device="nvidia%d",modelName="%s",Hostname="%s",DCGM_FI_DRIVER_VERSION="%s"`,
		i, uuid, 0x18+i, i, gpuModel, labelValue(s.hostname), gpuDriver)
}

// hostname is the Hostname label of the synthetic GPUs.
func hostname() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}
