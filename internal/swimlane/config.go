package swimlane

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// maxConfigBytes bounds profile_export_aiperf.json.
const maxConfigBytes = 256 << 20

// export is what the view takes of profile_export_aiperf.json.
type export struct {
	BenchmarkDuration json.RawMessage `json:"benchmark_duration"`
	InputConfig       *struct {
		Phases []struct {
			Kind            string          `json:"kind"`
			Exclude         bool            `json:"exclude_from_results"`
			ConcurrencyRamp json.RawMessage `json:"concurrency_ramp"`
		} `json:"phases"`
		Loadgen *struct {
			Ramp  *float64        `json:"concurrency_ramp_duration"`
			Bench json.RawMessage `json:"benchmark_duration"`
		} `json:"loadgen"`
		Ours *struct {
			Ramp *float64 `json:"concurrency_ramp_duration"`
		} `json:"aiperf_go"`
	} `json:"input_config"`
}

// readConfig reads the ramp and the benchmark duration from the run's
// profile_export_aiperf.json, when there is one. The ramp is the profiling
// phase's (AIPerf v2: input_config.phases[].concurrency_ramp.duration,
// the warmup and phases excluded from results skipped), else AIPerf v1's
// input_config.loadgen.concurrency_ramp_duration, else ours
// (input_config.aiperf_go). The duration is the measured one at the top
// level, else the configured loadgen.benchmark_duration, as AIPerf reads
// them.
//
// It is read as inputfile.ReadFileMax reads a file: a FIFO or a device is
// refused (Check refuses them by their mode first), and no more than
// maxConfigBytes+1 bytes are read of a file that grows.
func (r *Run) readConfig(path string) error {
	b, err := inputfile.ReadFileMax(path, maxConfigBytes)
	switch tl := (*inputfile.TooLargeError)(nil); {
	case errors.Is(err, fs.ErrNotExist):
		r.Notes = append(r.Notes, fmt.Sprintf("no %s beside the records: no benchmark-end marker, nor a ramp-done one unless --ramp gives it", FileJSON))
		return nil
	case errors.As(err, &tl):
		return fmt.Errorf("read %s: larger than %d MiB", path, maxConfigBytes>>20)
	case err != nil:
		return fmt.Errorf("read %s: %w", path, unwrapPath(err))
	}
	var e export
	if err := json.Unmarshal(b, &e); err != nil {
		return fmt.Errorf("%s: not AIPerf's JSON export: %w", path, err)
	}
	if ic := e.InputConfig; ic != nil {
		for _, ph := range ic.Phases {
			if ph.Exclude || ph.Kind == "warmup" || r.RampS != nil {
				continue
			}
			r.RampS = rampOf(ph.ConcurrencyRamp)
		}
		if r.RampS == nil && ic.Loadgen != nil {
			r.RampS = ic.Loadgen.Ramp
		}
		if r.RampS == nil && ic.Ours != nil {
			r.RampS = ic.Ours.Ramp
		}
	}
	r.BenchEndS = seconds(e.BenchmarkDuration)
	if r.BenchEndS == nil && e.InputConfig != nil && e.InputConfig.Loadgen != nil {
		r.BenchEndS = seconds(e.InputConfig.Loadgen.Bench)
	}
	if r.RampS != nil && !finite(*r.RampS) {
		r.RampS = nil
	}
	return nil
}

// rampOf is a phase's concurrency_ramp: {"duration": s} or a number.
func rampOf(raw json.RawMessage) *float64 {
	var v struct {
		Duration *float64 `json:"duration"`
	}
	if json.Unmarshal(raw, &v) == nil && v.Duration != nil {
		return v.Duration
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil && f > 0 {
		return &f
	}
	return nil
}

// seconds is a duration written as seconds or as a metric block
// ({"unit": "sec", "avg": s}; ms and ns converted).
func seconds(raw json.RawMessage) *float64 {
	var f float64
	if json.Unmarshal(raw, &f) == nil && finite(f) && f > 0 {
		return &f
	}
	var m struct {
		Avg  *float64 `json:"avg"`
		Unit string   `json:"unit"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Avg == nil || !finite(*m.Avg) || *m.Avg <= 0 {
		return nil
	}
	v := *m.Avg
	switch m.Unit {
	case "ms":
		v /= 1e3
	case "ns":
		v /= 1e9
	case "", "s", "sec", "seconds":
	default:
		return nil
	}
	return &v
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// unwrapPath is a *fs.PathError's cause, for an error that names the path
// already.
func unwrapPath(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
