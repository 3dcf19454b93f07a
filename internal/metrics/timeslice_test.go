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

// TestTimeslicesWindowTheRunsCurves: A runs 0–10 s, B 1.5–1.6 s, in 1 s
// slices. The slice [1, 2) holds B's start, and A is in flight all of it:
// concurrency 1 for 0.9 s and 2 for 0.1 s, avg 1.1 (B's records alone over
// B's span would say 1). The slice [0, 1) is A alone over its own second,
// avg 1 (not over A's 10 s). The run-scoped metrics (credit latencies,
// normalized interactivity) are not in any slice.
func TestTimeslicesWindowTheRunsCurves(t *testing.T) {
	const s = int64(1e9)
	wall := 100 * s
	a := Record{WallStartNs: wall, SentNs: 0, IssuedNs: 1, EndNs: 10 * s, ResponseNs: StampsOf(s/2, 10*s),
		InputTokens: 10, OutputTokens: 20}
	b := Record{WallStartNs: wall + 3*s/2, SentNs: 3 * s / 2, IssuedNs: 3 * s / 2, EndNs: 16 * s / 10,
		ResponseNs: StampsOf(155*s/100, 16*s/10), InputTokens: 10, OutputTokens: 2}
	got := Timeslices([]Record{a, b}, s, true)
	require.Len(t, got, 2)
	c, ok := got[1].Summary.Get(TagEffectiveConcurrency)
	require.True(t, ok)
	assert.InDelta(t, 1.1, c.Stats.Avg, 1e-9)
	c, _ = got[0].Summary.Get(TagEffectiveConcurrency)
	assert.InDelta(t, 1.0, c.Stats.Avg, 1e-9)
	for _, sl := range got {
		for _, tag := range []string{TagEffectiveLatency, TagCreditToStartLatency, TagE2EInteractivityP75, TagE2EInteractivityP90} {
			_, ok := sl.Summary.Get(tag)
			assert.False(t, ok, tag)
		}
	}
	run := Summarize([]Record{a, b}, true)
	_, ok = run.Get(TagEffectiveLatency)
	assert.True(t, ok, "the run has them")
}

// BenchmarkTimeslicesSweep: 20,000 streamed requests, 4 in flight, in 200
// slices of 100 each: each slice reads the run's curves over its own
// window, so the curves' part grows with the records, not records × slices
// (100,000 requests in 1,000 slices: 12.4 s an op, against 125 s when each
// slice sorted the whole run's change times), and a slice's few hundred
// chunk gaps are sorted in memory, not counted in 4 MiB bucket arrays (this
// benchmark: 0.31 s an op, against 5.0 s).
func BenchmarkTimeslicesSweep(b *testing.B) {
	const n, ms = 20_000, int64(1e6)
	records := make([]Record, n)
	for i := range records {
		at := int64(i) * ms / 4
		records[i] = Record{WallStartNs: at, SentNs: at, IssuedNs: at + 1, EndNs: at + 4*ms,
			ResponseNs: StampsOf(at+ms, at+4*ms), InputTokens: 100, OutputTokens: 20}
	}
	for b.Loop() {
		if got := Timeslices(records, 25*ms, true); len(got) != 200 {
			b.Fatalf("%d slices", len(got))
		}
	}
}
