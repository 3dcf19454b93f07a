package shard

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestCheckRecord: a record no request could have left is refused, with
// the field and why; a plausible one passes.
func TestCheckRecord(t *testing.T) {
	ph := plan.Phase{Name: "profiling", Kind: plan.KindProfiling}
	win := window{phase: &ph, from: 1_000, until: 10_000}
	good := func() metrics.Record {
		return metrics.Record{Index: 3, Phase: "profiling", PhaseKind: plan.KindProfiling, ScheduledNs: 2_000, SentNs: 2_100,
			EndNs: 9_000, FirstOutputNs: 3_000, ResponseNs: metrics.StampsOf(3_000, 3_000, 4_000, 8_000), Status: 200,
			InputTokens: 16, OutputTokens: 4, Usage: &metrics.Usage{PromptTokens: 16, CompletionTokens: 4, TotalTokens: new(20)}}
	}
	r := good()
	require.NoError(t, checkRecord(&r, win, 2))
	r.Client = &metrics.ClientCounts{InputTokens: 12, OutputTokens: 3} // the server's counts replaced these
	require.NoError(t, checkRecord(&r, win, 2))
	// A first content chunk count a server may report passes: one the ITL
	// cannot use (0, the whole reply or more) falls back to OSL − 1 with
	// the run's warning, as without --workers.
	for _, n := range []int{1, 0, 3, 4, 9} {
		r.Usage.FirstChunkTokens = new(n)
		require.NoError(t, checkRecord(&r, win, 2), "first_content_chunk_tokens %d", n)
	}
	for name, c := range map[string]struct {
		edit func(*metrics.Record)
		want string
	}{
		"kind":           {func(r *metrics.Record) { r.PhaseKind = plan.KindWarmup }, `marked phase_kind "warmup"`},
		"negative isl":   {func(r *metrics.Record) { r.InputTokens = -1 }, "input_tokens -1 is out of range"},
		"huge index":     {func(r *metrics.Record) { r.Index = 1 << 62 }, "index 4611686018427387904 is out of range"},
		"url":            {func(r *metrics.Record) { r.URL = 2 }, "url 2 is not one of the 2 --url"},
		"status":         {func(r *metrics.Record) { r.Status = 1000 }, "status 1000 is not an HTTP status"},
		"usage":          {func(r *metrics.Record) { r.Usage.CompletionTokens = -4 }, "usage completion_tokens -4 is out of range"},
		"before start":   {func(r *metrics.Record) { r.ScheduledNs = 999 }, "scheduled_ns 0.001 ms is outside the profiling phase's window"},
		"future":         {func(r *metrics.Record) { r.EndNs = 10_001 }, "end_ns 0.010 ms is outside"},
		"negative":       {func(r *metrics.Record) { r.EndNs = 2_000 }, "a negative duration: end_ns is 0.000 ms before sent_ns"},
		"ttft":           {func(r *metrics.Record) { r.ResponseNs = metrics.StampsOf(2_000, 3_000) }, "response_ns runs outside the request"},
		"itl":            {func(r *metrics.Record) { r.ResponseNs = metrics.StampsOf(3_000, 5_000, 4_000, 8_000) }, "response_ns goes back in time"},
		"first output":   {func(r *metrics.Record) { r.FirstOutputNs = 9_500 }, "first_output_ns is outside the request"},
		"negative turns": {func(r *metrics.Record) { r.Turn = -2 }, "turn -2 is out of range"},
		"client counts": {func(r *metrics.Record) { r.Client = &metrics.ClientCounts{InputTokens: 16, OutputTokens: -2} },
			"client_counts output_tokens -2 is out of range"},
		"cache usage": {func(r *metrics.Record) { n := -1; r.Usage.CacheMissTokens = &n },
			"usage cache_miss_tokens -1 is out of range"},
		"first chunk": {func(r *metrics.Record) { r.Usage.FirstChunkTokens = new(-3) },
			"usage first_content_chunk_tokens -3 is out of range"},
		"huge first chunk": {func(r *metrics.Record) { r.Usage.FirstChunkTokens = new(1 << 50) },
			"usage first_content_chunk_tokens 1125899906842624 is out of range"},
		"spec decode steps": {func(r *metrics.Record) { r.SpecDecode = &metrics.SpecDecode{NumSpecSteps: -3} },
			"a speculative-decoding count -3 is out of range"},
		"spec decode rate": {func(r *metrics.Record) {
			r.SpecDecode = &metrics.SpecDecode{NumSpecSteps: 3, DraftAcceptanceRate: 7}
		}, "speculative-decoding rate 7"},
	} {
		r := good()
		c.edit(&r)
		err := checkRecord(&r, win, 2)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
	}
}

// TestConnRefusesAnOversizedLine: a line over the limit is an error once
// the limit's bytes were read (never held whole); a line that is not a
// message is malformed; blank lines are skipped.
func TestConnRefusesAnOversizedLine(t *testing.T) {
	in := `{"t":"beat"}` + "\n\n" + `{"t":"progress","phase":"` + strings.Repeat("x", 1<<20) + `"}` + "\n"
	c := NewConn(strings.NewReader(in), nil).Limit(64 << 10)
	m, err := c.Recv()
	require.NoError(t, err)
	assert.Equal(t, TypeBeat, m.Type)
	_, err = c.Recv()
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "a line over 65536 bytes")

	c = NewConn(strings.NewReader("{\"t\":\"beat\"}{\"t\":\"rec\"}\nnot json\n"), nil)
	for range 2 {
		_, err = c.Recv()
		assert.ErrorIs(t, err, ErrMalformed)
	}
	_, err = c.Recv()
	assert.ErrorIs(t, err, io.EOF)

	c = NewConn(strings.NewReader(`{"t":"beat"}`), nil) // cut short
	_, err = c.Recv()
	assert.True(t, errors.Is(err, io.ErrUnexpectedEOF), "%v", err)
}

// TestConnWaiting: Waiting counts only while Recv waits for bytes, once
// the other side said something.
func TestConnWaiting(t *testing.T) {
	pr, pw := io.Pipe()
	c := NewConn(pr, nil)
	assert.Zero(t, c.Waiting(), "not reading")
	got := make(chan *Msg)
	recv := func() { m, _ := c.Recv(); got <- m }
	go recv()
	for c.rd.since.Load() == 0 { // the reader is waiting: a rendezvous, not a timing
		runtime.Gosched()
	}
	assert.Zero(t, c.Waiting(), "the other side has not said anything yet: it is starting")
	_, err := pw.Write([]byte(`{"t":"beat"}` + "\n"))
	require.NoError(t, err)
	assert.Equal(t, TypeBeat, (<-got).Type)
	assert.Zero(t, c.Waiting(), "not reading")
	go recv()
	for c.Waiting() == 0 {
		runtime.Gosched()
	}
	pw.Close()
	assert.Nil(t, <-got)
	var buf bytes.Buffer
	_ = NewConn(nil, &buf).Send(&Msg{Type: TypeBeat})
	assert.Equal(t, `{"t":"beat"}`+"\n", buf.String())
}
