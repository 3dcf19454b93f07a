package servermetrics

import "fmt"

// Bounds no GPU reports within: a figure beyond them is the exporter's
// error (or a metric read as what it is not), not a measurement.
const (
	maxGPUWatts = 10_000  // per GPU; today's largest draw about 1,200 W
	maxGPUMiB   = 1 << 30 // per GPU: a pebibyte
)

// impossible says why a headline row's value cannot be (negative, a
// percentage above 100, a GPU's power or memory beyond any GPU's), or ""
// when it can.
func impossible(r Row) string {
	switch {
	case r.Value < 0:
		return "it is negative"
	case r.Unit == "%" && r.Value > 100:
		return "a percentage above 100"
	case r.Unit == "W" && r.Value > maxGPUWatts:
		return fmt.Sprintf("above %d W for one GPU", maxGPUWatts)
	case r.Unit == "MiB" && r.Value > maxGPUMiB:
		return fmt.Sprintf("above %d MiB for one GPU", maxGPUMiB)
	}
	return ""
}
