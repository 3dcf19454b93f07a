package seqdist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Dist is a parsed mixture: its buckets and their cumulative weights.
type Dist struct {
	Buckets []Bucket
	cum     []float64
}

func newDist(buckets []Bucket) *Dist {
	d := &Dist{Buckets: buckets, cum: make([]float64, len(buckets))}
	total := 0.0
	for i, b := range buckets {
		total += b.Weight
		d.cum[i] = total
	}
	return d
}

// Pick draws a bucket by weight with one uniform draw of r.
func (d *Dist) Pick(r *rand.Rand) Bucket {
	u := r.Float64() * d.cum[len(d.cum)-1]
	i := sort.Search(len(d.cum), func(i int) bool { return d.cum[i] > u })
	return d.Buckets[min(i, len(d.Buckets)-1)]
}

// Share is bucket i's fraction of the draws.
func (d *Dist) Share(i int) float64 { return d.Buckets[i].Weight / d.cum[len(d.cum)-1] }

// String describes the mixture as AIPerf logs it: 70% (ISL~N(64,10),
// OSL~N(32,8)), 30% (ISL=256, OSL=128).
func (d *Dist) String() string {
	parts := make([]string, len(d.Buckets))
	for i, b := range d.Buckets {
		parts[i] = fmt.Sprintf("%s%% (%s, %s)", strconv.FormatFloat(math.Round(1e4*d.Share(i))/100, 'f', -1, 64),
			length("ISL", b.ISL, b.ISLStddev), length("OSL", b.OSL, b.OSLStddev))
	}
	return strings.Join(parts, ", ")
}

func length(what string, mean int, sd float64) string {
	if sd == 0 {
		return fmt.Sprintf("%s=%d", what, mean)
	}
	return fmt.Sprintf("%s~N(%d,%s)", what, mean, strconv.FormatFloat(sd, 'f', -1, 64))
}
