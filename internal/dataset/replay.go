package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// Replay holds the trace-replay controls of an indexed JSONL file (AIPerf's
// baseten_trace knobs, applied here to every such file). The zero value
// replays the file as recorded.
type Replay struct {
	// SampleRatio in (0, 1) keeps max(1, round(SampleRatio × sessions))
	// whole sessions, picked by Options.Seed; 0 or 1 keeps them all
	// (--trace-session-sample-ratio).
	SampleRatio float64
	// IdleGapCapMs, when set, collapses every gap between consecutive
	// request timestamps of the file (across sessions) to at most this many
	// ms of replay time (--max-idle-gap-cap-seconds).
	IdleGapCapMs *float64
	// TraceIdleGapCapMs, when set, compresses every gap between a session's
	// consecutive requests to at most this many ms of replay time, replacing
	// Options.DelayCapMs (--trace-idle-gap-cap-seconds).
	TraceIdleGapCapMs *float64
	// ClosedLoop sends a session's later timestamped turns their recorded
	// start-to-start gap after the previous reply instead of at their
	// timestamp (--no-open-loop-replay).
	ClosedLoop bool
	// Strict makes every row its own one-turn conversation
	// (--open-loop-strict).
	Strict bool
	// Speedup is the fixed schedule's speed-up (timestamps are divided by
	// it when sent; 0 means 1): the caps are in replay time.
	Speedup float64
	// ThinkTimeOnly sends a weka_trace's later calls their recorded
	// think_time after the previous reply, not at their recorded start
	// (--use-think-time-only); MaxContext, when set, drops the weka_trace
	// traces whose peak in+out tokens of one call exceed it
	// (--max-context-length). The plan refuses both for other formats.
	ThinkTimeOnly bool
	MaxContext    int
	// OmitKVHints leaves a baseten_trace's recorded hash_ids and block_size
	// out of its bodies (--omit-kv-hints), NoMinTokens its min_tokens
	// (--no-force-min-tokens). The plan refuses both for other formats.
	OmitKVHints, NoMinTokens bool
}

// streamSessionSample keys the sessions --trace-session-sample-ratio keeps.
const streamSessionSample uint64 = 0x73616d706c65 // "sample"

func (r Replay) speedup() float64 {
	if r.Speedup > 0 {
		return r.Speedup
	}
	return 1
}

// sampling reports whether the index must drop sessions.
func (r Replay) sampling() bool { return r.SampleRatio > 0 && r.SampleRatio < 1 }

// addTurns counts n more turns of conversation conv.
func (ix *indexer) addTurns(conv int32, n int) {
	ix.d.turns += n
	if ix.convTurns != nil {
		ix.convTurns[conv] += int32(n)
	}
}

// sample keeps the sessions --trace-session-sample-ratio picks, in file
// order, after group.
func (ix *indexer) sample() {
	d := ix.d
	n := len(d.ts)
	k := max(1, int(math.Round(float64(n)*d.o.Replay.SampleRatio)))
	if !d.o.Replay.sampling() || k >= n {
		return
	}
	picks := rand.New(rand.NewPCG(uint64(d.o.Seed), streamSessionSample)).Perm(n)[:k]
	slices.Sort(picks)
	var off []int64
	var size, start, sum []uint32
	line, ts := make([]uint32, 0, k), make([]float64, 0, k)
	if d.start != nil {
		start = append(make([]uint32, 0, k+1), 0)
	}
	d.turns = 0
	for _, c := range picks {
		lo, hi := uint32(c), uint32(c+1)
		if d.start != nil {
			lo, hi = d.start[c], d.start[c+1]
		}
		off, size = append(off, d.off[lo:hi]...), append(size, d.n[lo:hi]...)
		if d.sum != nil {
			sum = append(sum, d.sum[lo:hi]...)
		}
		if start != nil {
			start = append(start, uint32(len(off)))
		}
		line, ts = append(line, d.line[c]), append(ts, d.ts[c])
		d.turns += int(ix.convTurns[c])
	}
	d.off, d.n, d.sum, d.start, d.line, d.ts = off, size, sum, start, line, ts
	ix.convTurns = nil
}

// gapShift says that timestamps from at on are shift ms earlier.
type gapShift struct{ at, shift float64 }

// noteTimes remembers a kept row's timestamps for the idle-gap cap.
func (ix *indexer) noteTimes(info rowInfo) {
	if ix.d.o.Replay.IdleGapCapMs == nil {
		return
	}
	for _, t := range []float64{info.first, info.last} {
		if !math.IsNaN(t) {
			ix.times = append(ix.times, t)
		}
	}
}

// capIdleGaps turns the timestamps noted into the shifts that collapse
// every gap longer than the cap (in recorded ms: the cap × the speed-up),
// and applies them to the conversations' start times.
func (ix *indexer) capIdleGaps() {
	d := ix.d
	if d.o.Replay.IdleGapCapMs == nil || len(ix.times) == 0 {
		return
	}
	limit := *d.o.Replay.IdleGapCapMs * d.o.Replay.speedup()
	slices.Sort(ix.times)
	shift := 0.0
	for i := 1; i < len(ix.times); i++ {
		if gap := ix.times[i] - ix.times[i-1]; gap > limit {
			shift += gap - limit
			d.gaps = append(d.gaps, gapShift{at: ix.times[i], shift: shift})
		}
	}
	ix.times = nil
	for c, ts := range d.ts {
		d.ts[c] = d.compress(ts)
	}
	ix.latest = d.compress(ix.latest)
}

// compress is timestamp ts with the idle gaps before it collapsed.
func (d *fileDataset) compress(ts float64) float64 {
	i := sort.Search(len(d.gaps), func(i int) bool { return d.gaps[i].at > ts })
	if i == 0 || math.IsNaN(ts) {
		return ts
	}
	return ts - d.gaps[i-1].shift
}

// sessionTiming applies --trace-idle-gap-cap-seconds and
// --no-open-loop-replay to a conversation read back: the gaps between its
// timestamped turns compressed to the cap and its delays clamped to it,
// then each later timestamped turn sent its gap after the previous reply.
func (d *fileDataset) sessionTiming(c *Conversation) {
	r := d.o.Replay
	if r.TraceIdleGapCapMs == nil && !r.ClosedLoop {
		return
	}
	speed := r.speedup()
	prevRaw, prevNew := math.NaN(), math.NaN()
	for k := range c.Turns {
		t := &c.Turns[k]
		if !t.HasTimestamp {
			if k > 0 && r.TraceIdleGapCapMs != nil {
				t.DelayMs = min(t.DelayMs, *r.TraceIdleGapCapMs)
			}
			prevRaw, prevNew = math.NaN(), math.NaN()
			continue
		}
		raw, at := t.TimestampMs, t.TimestampMs
		if !math.IsNaN(prevRaw) {
			gap := max(0, raw-prevRaw)
			if r.TraceIdleGapCapMs != nil {
				gap = min(gap, *r.TraceIdleGapCapMs*speed)
			}
			at = prevNew + gap
			t.TimestampMs = at
			if r.ClosedLoop {
				t.DelayMs, t.TimestampMs, t.HasTimestamp = gap/speed, 0, false
				if dc := d.o.DelayCapMs; dc != nil && r.TraceIdleGapCapMs == nil {
					t.DelayMs = min(t.DelayMs, *dc)
				}
			}
		}
		prevRaw, prevNew = raw, at
	}
}

// refuseFormatControls is the error for the controls of one format given
// with an input of kind, another (a detected format: the plan refuses them
// when the format is named), or nil: weka_trace's think time and context
// limit, baseten_trace's request-body controls.
func (r Replay) refuseFormatControls(kind string) error {
	weka, baseten := kind == TypeWekaTrace, kind == TypeBasetenTrace
	switch {
	case r.ThinkTimeOnly && !weka:
		return fmt.Errorf("--use-think-time-only applies to weka_trace, whose requests record their think_time; %s records none: remove it", kind)
	case r.MaxContext > 0 && !weka:
		return fmt.Errorf("--max-context-length applies to weka_trace (it drops whole traces whose recorded peak prompt+output length exceeds it), not %s: remove it", kind)
	case r.OmitKVHints && !baseten:
		return fmt.Errorf("--omit-kv-hints applies to baseten_trace, whose request bodies forward the recorded hash_ids and block_size; %s sends none: remove it", kind)
	case r.NoMinTokens && !baseten:
		return fmt.Errorf("--no-force-min-tokens applies to baseten_trace, which pins min_tokens to the recorded output length; %s sends no min_tokens: remove it", kind)
	}
	return nil
}

// refuse is the error for replay controls given with an input that is not
// an indexed JSONL file (what is the input), or nil when none is given.
func (r Replay) refuse(what string) error {
	var flags []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"--trace-session-sample-ratio", r.sampling()}, {"--max-idle-gap-cap-seconds", r.IdleGapCapMs != nil},
		{"--trace-idle-gap-cap-seconds", r.TraceIdleGapCapMs != nil}, {"--no-open-loop-replay", r.ClosedLoop},
		{"--open-loop-strict", r.Strict},
	} {
		if f.set {
			flags = append(flags, f.name)
		}
	}
	if len(flags) == 0 {
		return nil
	}
	return fmt.Errorf("%s replays the sessions of a JSONL file (a trace, single_turn or multi_turn), not %s: remove it",
		strings.Join(flags, ", "), what)
}
