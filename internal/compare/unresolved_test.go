package compare

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTTFTGapInsideTheBucketIsNotResolved: a client-minus-server TTFT gap
// smaller than the width of the bucket the server's p50 was interpolated
// in says so (a newcomer read the README's -9.60 ms, the server's p50 an
// estimate of 30 in 20–40, as the client's time being less than the
// server's); a wider gap, or one without bucket bounds, is a figure.
func TestTTFTGapInsideTheBucketIsNotResolved(t *testing.T) {
	bucket := Bucket{LowMs: 20, HighMs: 40}
	rep := &GroupsReport{Groups: []GroupInfo{{Label: "a"}, {Label: "b"}, {Label: "c"}}, ConfidenceLevel: 0.95,
		ClientMinusServerTTFT: []Estimate{newEstimate([]float64{-9.6, -9.6}, 0.95), newEstimate([]float64{25, 25}, 0.95),
			newEstimate([]float64{-9.6, -9.6}, 0.95)},
		ServerTTFTBucket: []Bucket{bucket, bucket, {}}}
	notes := strings.Join(rep.Table().Notes, "\n")
	assert.Contains(t, notes, "client TTFT − server TTFT p50: -9.60 ± 0.00 ms, not resolved (a), 25.00 ± 0.00 ms (b), -9.60 ± 0.00 ms (c)")
	assert.True(t, unresolved(rep.ClientMinusServerTTFT[0], bucket))
	assert.False(t, unresolved(rep.ClientMinusServerTTFT[1], bucket), "25 ms is beyond the 20 ms width")
	assert.False(t, unresolved(rep.ClientMinusServerTTFT[0], Bucket{}), "no bounds stored: a figure")
}
