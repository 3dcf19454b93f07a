package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTimeslicesByStart(t *testing.T) {
	const s = int64(1e9)
	wall := 100*s + s/2 // mid-slice: the first slice is partial
	rec := func(at, lat int64) Record {
		return Record{PhaseKind: "profiling", WallStartNs: wall + at, SentNs: at, EndNs: at + lat,
			ResponseNs: StampsOf(at+lat/2, at+lat), FirstOutputNs: at + lat/2, InputTokens: 10, OutputTokens: 2}
	}
	records := []Record{rec(0, 100e6), rec(s/4, 300e6), rec(s, 200e6), rec(3*s, 400e6)}
	slices := Timeslices(records, s, true)
	require.Len(t, slices, 3, "the empty slice (102 s) is left out")
	assert.Equal(t, 100*s, slices[0].StartNs, "slices are whole seconds of the epoch")
	assert.False(t, slices[0].Complete, "the first slice started before the first request")
	assert.True(t, slices[1].Complete)
	assert.False(t, slices[2].Complete, "the last slice ends after the last response")
	n, _ := slices[0].Summary.Get(TagRequestCount)
	assert.Equal(t, 2.0, n.Value, "both requests that started in the first slice")
	lat, _ := slices[0].Summary.Get(TagRequestLatency)
	assert.InDelta(t, 200, lat.Stats.Avg, 1e-9, "metrics from the slice's own records")
	lat, _ = slices[2].Summary.Get(TagRequestLatency)
	assert.InDelta(t, 400, lat.Stats.Avg, 1e-9)
	assert.Nil(t, Timeslices(records, 0, true))
}
