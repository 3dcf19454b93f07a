package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// ShareGPT's length filter (vLLM's, as AIPerf applies it to every pair).
const (
	shareGPTMinLen    = 4
	shareGPTMaxPrompt = 1024
	shareGPTMaxTotal  = 2048
)

// shareGPTEntry is one element of a ShareGPT file's top-level array.
type shareGPTEntry struct {
	Conversations []struct {
		From  *string `json:"from"`
		Value *string `json:"value"`
	} `json:"conversations"`
}

// pairs returns an entry's (prompt, completion) pairs as AIPerf does: with
// "from" roles, every human message directly followed by a gpt message
// (both non-empty); without, the first two values.
func (e *shareGPTEntry) pairs() [][2]string {
	msgs := e.Conversations
	if len(msgs) < 2 {
		return nil
	}
	value := func(i int) string {
		if v := msgs[i].Value; v != nil {
			return *v
		}
		return ""
	}
	from := func(i int) string {
		if f := msgs[i].From; f != nil {
			return *f
		}
		return ""
	}
	var roles []int
	for i := range msgs {
		if f := from(i); f == "human" || f == "gpt" {
			roles = append(roles, i)
		}
	}
	if len(roles) == 0 {
		if value(0) == "" || value(1) == "" {
			return nil
		}
		return [][2]string{{value(0), value(1)}}
	}
	var out [][2]string
	for k := 0; k < len(roles)-1; {
		i, j := roles[k], roles[k+1]
		if from(i) != "human" || from(j) != "gpt" {
			k++
			continue
		}
		if value(i) != "" && value(j) != "" {
			out = append(out, [2]string{value(i), value(j)})
		}
		k += 2
	}
	return out
}

// shareGPTDataset is a ShareGPT file indexed in one pass: the entries that
// pass the length filter and their pairs' token counts.
type shareGPTDataset struct {
	o      Options
	rf     *recordFile
	start  []uint32 // entry i's counts are counts[2*start[i] : 2*start[i+1]]
	counts []uint16 // per pair: prompt tokens, completion tokens
	files
}

// shareGPTShape describes a ShareGPT record for messages.
const shareGPTShape = `{"conversations": [{"from": …, "value": …}, …]} entries`

// openShareGPT reads a local ShareGPT file (never downloaded; a JSON array,
// JSON Lines or Parquet): each entry whose every pair passes the length
// filter (prompt 4–1024 tokens, completion ≥ 4 unless --osl is set, both
// ≤ 2048) is a conversation of one turn per pair, asking for the
// completion's length.
func openShareGPT(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	rf, err := openRecordFile(o.InputFile)
	if err != nil {
		return nil, fmt.Errorf("sharegpt dataset: %w", err)
	}
	d := &shareGPTDataset{o: o, rf: rf, start: []uint32{0}}
	entries, err := rf.index(ctx, shareGPTShape, func(raw []byte) (bool, *problem) {
		var e shareGPTEntry
		if ps := decodeLine(raw, &e); ps != nil {
			return false, &ps[0]
		}
		return d.keep(tok, &e, len(raw)), nil
	})
	if err == nil && rf.Len() == 0 {
		err = &LineError{Path: rf.path, Msg: fmt.Sprintf("none of the %d entries passes ShareGPT's length filter (prompt %d–%d tokens, completion at least %d, both at most %d)",
			entries, shareGPTMinLen, shareGPTMaxPrompt, shareGPTMinLen, shareGPTMaxTotal)}
	}
	if err != nil {
		rf.f.Close()
		return nil, fmt.Errorf("sharegpt dataset: %w", err)
	}
	d.files.list = []*os.File{rf.f} // a Parquet file's records are in their spill now
	return d, nil
}

// offProblem is a problem at a byte offset of the file (its column
// unsaid when noCol), or on a line (a Parquet row) when line > 0.
type offProblem struct {
	off   int64
	noCol bool
	line  int
	p     problem
}

// keep tokenizes an entry's pairs and keeps it if every pair passes the
// filter.
func (d *shareGPTDataset) keep(tok tokenizer.Tokenizer, e *shareGPTEntry, size int) bool {
	pairs := e.pairs()
	if len(pairs) == 0 || size > maxLine {
		return false
	}
	counts := make([]uint16, 0, 2*len(pairs))
	for _, p := range pairs {
		in, out := tok.Count(p[0]), tok.Count(p[1])
		if in < shareGPTMinLen || in > shareGPTMaxPrompt || in+out > shareGPTMaxTotal || out < shareGPTMinLen && d.o.OSLMean == 0 {
			return false
		}
		counts = append(counts, uint16(in), uint16(out))
	}
	d.counts = append(d.counts, counts...)
	d.start = append(d.start, uint32(len(d.counts)/2))
	return true
}

// syntaxProblem places a decoder's syntax error at the offending byte.
func syntaxProblem(dec *json.Decoder, err error) offProblem {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return offProblem{off: syntax.Offset - 1, p: problemf("", "invalid JSON: %s", syntax.Error())}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return offProblem{off: dec.InputOffset(), p: problemf("", "the file ends inside the top-level array")}
	}
	return offProblem{off: dec.InputOffset(), p: problemf("", "invalid JSON: %v", err)}
}

func (d *shareGPTDataset) Len() int { return d.rf.Len() }

// Conversation reads entry i back and returns its pairs' prompts as turns.
func (d *shareGPTDataset) Conversation(i int) (Conversation, error) {
	if err := d.readable(d.rf.path, i, d.rf.Len()); err != nil {
		return Conversation{}, err
	}
	raw, err := d.rf.record(i)
	if err != nil {
		return Conversation{}, err
	}
	var e shareGPTEntry
	err = json.Unmarshal(raw, &e)
	pairs := e.pairs()
	counts := d.counts[2*d.start[i] : 2*d.start[i+1]]
	if err != nil || 2*len(pairs) != len(counts) {
		return Conversation{}, fmt.Errorf("re-read %s: the entry changed since the file was opened", d.rf.where(i))
	}
	c := Conversation{ID: fmt.Sprintf("sharegpt-%d", i), Mode: DeltasWithoutResponses}
	for k, p := range pairs {
		c.Turns = append(c.Turns, Turn{Text: p[0], InputTokens: int(counts[2*k]), MaxTokens: int(counts[2*k+1])})
	}
	return c, nil
}

func (d *shareGPTDataset) Schedule() []Timed { return nil }

func (d *shareGPTDataset) Sampling() string { return samplingOr(d.o, SamplingSequential) }

func (d *shareGPTDataset) turnCount() int { return len(d.counts) / 2 }
