package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// fileDataset is a JSONL file (single_turn, multi_turn, mooncake_trace)
// indexed in one pass: per row it keeps the byte offset and length, per
// conversation its rows' span, first line and start time. A conversation
// is read back from the file when it is asked for.
type fileDataset struct {
	kind     string
	path     string
	f        *os.File
	o        Options
	tok      tokenizer.Tokenizer
	words    *words    // traces only
	burst    *burstCSV // burst_gpt_trace only
	baseten  *basetenFile
	captured float64 // sagemaker_data_capture: the first request's time (ms), its zero
	block    int     // tokens per hash id (traces)
	media    *fileMedia
	zero     float64
	files

	// Rows grouped by conversation: conversation c is rows
	// start[c]..start[c+1]-1, in file order; start is nil when every
	// conversation is one row (row c).
	off   []int64
	n     []uint32
	start []uint32
	// Per conversation: first line and start time (NaN: none).
	line []uint32
	ts   []float64
	// timed: every conversation has a start time.
	timed bool
	turns int
	// gaps collapse the idle gaps longer than --max-idle-gap-cap-seconds
	// (replay.go), in time order.
	gaps []gapShift
	// sum is each row's checksum when the file was indexed (in the rows'
	// order; nil for a Parquet file) and stamp the file's size and
	// modification time when it was opened: a row read back is checked
	// against both (changed.go).
	sum   []uint32
	stamp fileStamp
	// counts are the token counts of its long texts, once counted.
	counts countCache
}

// rowRange is the rows [lo, hi) of conversation i, once the file is
// checked readable and unchanged.
func (d *fileDataset) rowRange(i int) (lo, hi uint32, err error) {
	if err := d.readable(d.path, i, len(d.ts)); err != nil {
		return 0, 0, err
	}
	if err := d.unchanged(); err != nil {
		return 0, 0, err
	}
	if d.start != nil {
		return d.start[i], d.start[i+1], nil
	}
	return uint32(i), uint32(i + 1), nil
}

// convBuilder is a conversation being read back.
type convBuilder struct {
	Conversation
	tok  *ctxTok         // counts under the read's context
	lead bool            // multi_turn: the first turn may be hoisted
	seen map[string]bool // single_turn under --uuid-and-strip: the image uuids sent with bytes
}

func (d *fileDataset) Len() int { return len(d.ts) }

// Conversation reads conversation i's rows back from the file and builds
// its turns. It is safe for concurrent use.
func (d *fileDataset) Conversation(i int) (Conversation, error) {
	return d.ConversationContext(context.Background(), i)
}

// ConversationContext is Conversation that gives up with ctx's error once
// ctx is done, counting a long text's tokens included.
func (d *fileDataset) ConversationContext(ctx context.Context, i int) (Conversation, error) {
	lo, hi, err := d.rowRange(i)
	if err != nil {
		return Conversation{}, err
	}
	if d.baseten != nil {
		return d.basetenConversation(i, lo, hi)
	}
	total := 0
	for r := lo; r < hi; r++ {
		total += int(d.n[r])
	}
	buf := make([]byte, total)
	b := convBuilder{Conversation: Conversation{Mode: DeltasWithoutResponses}, tok: &ctxTok{Tokenizer: d.tok, ctx: ctx, cache: &d.counts}}
	for r := lo; r < hi; r++ {
		if err := ctx.Err(); err != nil {
			return Conversation{}, fmt.Errorf("read conversation %d: %w", i, err)
		}
		line := buf[:d.n[r]]
		buf = buf[d.n[r]:]
		_, err := d.f.ReadAt(line, d.off[r])
		if err := d.checkRow(r, line, err); err != nil {
			return Conversation{}, err
		}
		switch d.kind {
		case TypeSingleTurn:
			err = d.singleTurn(&b, line, uint64(d.off[r]))
		case TypeMultiTurn:
			err = d.multiTurn(&b, line, uint64(d.off[r]))
		case TypeBailianTrace:
			err = d.bailianTurn(&b, line, uint64(d.off[r]))
		case TypeBurstGPTTrace:
			err = d.burstTurn(&b, line, uint64(d.off[r]))
		case TypeSageMakerCapture:
			err = d.captureTurn(&b, line, uint64(d.off[r]))
		case TypeRawPayload:
			err = d.rawTurn(&b, line)
		case TypeInputsJSON:
			err = d.inputsTurns(&b, line)
		default:
			err = d.mooncakeTurn(&b, line, uint64(d.off[r]))
		}
		if b.tok.err != nil {
			return Conversation{}, fmt.Errorf("read conversation %d: %w", i, b.tok.err)
		}
		if err != nil {
			return Conversation{}, fmt.Errorf("re-read %s at byte %d (was the file changed since it was opened?): %w", d.path, d.off[r], err)
		}
	}
	switch d.kind {
	case TypeSingleTurn:
		if hi-lo > 1 {
			b.Mode = MessageArrayWithResponses
		}
	case TypeMultiTurn:
		b.hoistSystem()
	}
	d.sessionTiming(&b.Conversation)
	if b.ID == "" {
		b.ID = fmt.Sprintf("%s:%d", filepath.Base(d.path), d.line[i])
	}
	return b.Conversation, nil
}

// Schedule builds the schedule (sorting the start times) on each call.
func (d *fileDataset) Schedule() []Timed {
	if !d.timed {
		return nil
	}
	s := make([]Timed, len(d.ts))
	for c, ts := range d.ts {
		s[c] = Timed{Conv: c, AtMs: ts - d.zero}
	}
	slices.SortStableFunc(s, func(a, b Timed) int { return cmpFloat(a.AtMs, b.AtMs) })
	return s
}

func (d *fileDataset) Sampling() string { return samplingOr(d.o, SamplingSequential) }

func (d *fileDataset) turnCount() int { return d.turns }

// indexBytes is the memory the index holds, in bytes.
func (d *fileDataset) indexBytes() int {
	return cap(d.off)*8 + cap(d.n)*4 + cap(d.start)*4 + cap(d.line)*4 + cap(d.ts)*8 + cap(d.sum)*4
}
