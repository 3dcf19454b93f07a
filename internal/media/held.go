package media

import (
	"fmt"
	"math"
)

// MaxItemBytes bounds what one synthetic item may hold as its data URI
// (for an MP3, of the WAV it is encoded from): 1 GiB. Making an item holds
// it about twice over for a moment (the file and its base64), on every CPU
// at once, so one item larger than this could exhaust memory on its own.
const MaxItemBytes = 1 << 30

// TailSigmas is how far above the mean a size drawn from a normal
// distribution is taken to reach when one item is bounded: 4 standard
// deviations (a draw beyond it, 3 in 100,000, is refused as it is made).
const TailSigmas = 4

// clampedMean is the mean of a normal(mean, sd) draw clamped to [lo, hi]:
// what a size averages over many items when its spread meets a bound.
func clampedMean(mean, sd, lo, hi float64) float64 {
	if sd <= 0 {
		return min(hi, max(lo, mean))
	}
	a, b := (lo-mean)/sd, (hi-mean)/sd
	cdf := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	pdf := func(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }
	return lo*cdf(a) + hi*(1-cdf(b)) + mean*(cdf(b)-cdf(a)) + sd*(pdf(a)-pdf(b))
}

// tail is the largest a normal(mean, sd) draw clamped to [lo, hi] is taken
// to reach: mean + TailSigmas·sd, within the bounds.
func tail(mean, sd, lo, hi float64) float64 {
	return min(hi, max(lo, mean+TailSigmas*max(0, sd)))
}

// uriBytes is about the size of the data URI of a file of b bytes.
func uriBytes(b float64) int64 { return int64(b*4/3) + 32 }

// ItemError is one synthetic item (drawn, or the largest the flags may
// draw) too large to hold: it says what to lower.
type ItemError struct {
	What  string // "image", "audio" or "video"
	Bytes int64  // what it would hold
	Lower string // the flags to lower
}

func (e *ItemError) Error() string {
	return "one synthetic " + e.What + " would hold about " + Bytes(e.Bytes) + ", more than the " + Bytes(MaxItemBytes) +
		" one item may: lower " + e.Lower
}

// Bytes words a byte count in GiB, MiB or KiB.
func Bytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
}
