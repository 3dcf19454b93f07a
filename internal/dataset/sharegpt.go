package dataset

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

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

// shareGPTDataset is a ShareGPT file indexed in one pass: the byte span of
// each entry that passes the length filter and its pairs' token counts.
type shareGPTDataset struct {
	o      Options
	path   string
	f      *os.File
	off    []int64
	n      []uint32
	start  []uint32 // entry i's counts are counts[2*start[i] : 2*start[i+1]]
	counts []uint16 // per pair: prompt tokens, completion tokens
	files
}

// openShareGPT reads a ShareGPT JSON file (never downloaded): each entry
// whose every pair passes the length filter (prompt 4–1024 tokens,
// completion ≥ 4 unless --osl is set, both ≤ 2048) is a conversation of
// one turn per pair, asking for the completion's length.
func openShareGPT(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	f, err := os.Open(o.InputFile)
	if err != nil {
		return nil, fmt.Errorf("sharegpt dataset: %w", err)
	}
	d := &shareGPTDataset{o: o, path: o.InputFile, f: f, start: []uint32{0}, files: files{list: []*os.File{f}}}
	entries, bad, more, err := d.index(ctx, tok)
	if err == nil && len(bad) > 0 {
		err = d.placeProblems(bad, more)
	}
	if err == nil && entries == 0 {
		err = &LineError{Path: d.path, Msg: "no records: the array holds no entries"}
	}
	if err == nil && len(d.off) == 0 {
		err = &LineError{Path: d.path, Msg: fmt.Sprintf("none of the %d entries passes ShareGPT's length filter (prompt %d–%d tokens, completion at least %d, both at most %d)",
			entries, shareGPTMinLen, shareGPTMaxPrompt, shareGPTMinLen, shareGPTMaxTotal)}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sharegpt dataset: %w", err)
	}
	return d, nil
}

// offProblem is a problem at a byte offset of the file.
type offProblem struct {
	off int64
	p   problem
}

// index reads the file's array, keeping the entries that pass the filter.
// It returns the number of entries, the problems found (the first
// maxProblems) and how many more there are.
func (d *shareGPTDataset) index(ctx context.Context, tok tokenizer.Tokenizer) (entries int, bad []offProblem, more int, err error) {
	dec := json.NewDecoder(bufio.NewReaderSize(d.f, 1<<20))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return 0, []offProblem{{0, problemf("", `expected a JSON array of {"conversations": [{"from": …, "value": …}, …]} entries`)}}, 0, nil
	}
	for dec.More() {
		if entries%1024 == 0 && ctx.Err() != nil {
			return 0, nil, 0, fmt.Errorf("stopped at entry %d: %w", entries, ctx.Err())
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return entries, append(bad, syntaxProblem(dec, err)), more, nil
		}
		entries++
		end := dec.InputOffset()
		begin := end - int64(len(raw))
		var e shareGPTEntry
		if ps := decodeLine(raw, &e); ps != nil {
			if len(bad) < maxProblems {
				bad = append(bad, offProblem{begin + int64(max(ps[0].at-1, 0)), problem{Field: ps[0].Field, Msg: ps[0].Msg}})
			} else {
				more++
			}
			continue
		}
		d.keep(tok, &e, begin, len(raw))
	}
	if _, err := dec.Token(); err != nil {
		return entries, append(bad, syntaxProblem(dec, err)), more, nil
	}
	if _, err := dec.Token(); err != io.EOF {
		bad = append(bad, offProblem{dec.InputOffset(), problemf("", "unexpected data after the top-level array")})
	}
	return entries, bad, more, nil
}

// keep tokenizes an entry's pairs and indexes it if every pair passes the
// filter.
func (d *shareGPTDataset) keep(tok tokenizer.Tokenizer, e *shareGPTEntry, begin int64, size int) {
	pairs := e.pairs()
	if len(pairs) == 0 || size > maxLine {
		return
	}
	counts := make([]uint16, 0, 2*len(pairs))
	for _, p := range pairs {
		in, out := tok.Count(p[0]), tok.Count(p[1])
		if in < shareGPTMinLen || in > shareGPTMaxPrompt || in+out > shareGPTMaxTotal || out < shareGPTMinLen && d.o.OSLMean == 0 {
			return
		}
		counts = append(counts, uint16(in), uint16(out))
	}
	d.off, d.n = append(d.off, begin), append(d.n, uint32(size))
	d.counts = append(d.counts, counts...)
	d.start = append(d.start, uint32(len(d.counts)/2))
}

// syntaxProblem places a decoder's syntax error at the offending byte.
func syntaxProblem(dec *json.Decoder, err error) offProblem {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return offProblem{syntax.Offset - 1, problemf("", "invalid JSON: %s", syntax.Error())}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return offProblem{dec.InputOffset(), problemf("", "the file ends inside the top-level array")}
	}
	return offProblem{dec.InputOffset(), problemf("", "invalid JSON: %v", err)}
}

// placeProblems turns problems at byte offsets into LineErrors, reading
// the file once more to find their lines and columns.
func (d *shareGPTDataset) placeProblems(bad []offProblem, more int) error {
	ps := problems{path: d.path, more: more}
	br := bufio.NewReaderSize(io.NewSectionReader(d.f, 0, 1<<62), 1<<20)
	var off int64
	line, col := 1, 1
	for _, b := range bad {
		for ; off < b.off; off++ {
			c, err := br.ReadByte()
			if err != nil {
				break
			}
			switch {
			case c == '\n':
				line, col = line+1, 1
			case utf8.RuneStart(c):
				col++
			}
		}
		b.p.Col = col
		ps.add(line, b.p)
	}
	return ps.err()
}

func (d *shareGPTDataset) Len() int { return len(d.off) }

// Conversation reads entry i back and returns its pairs' prompts as turns.
func (d *shareGPTDataset) Conversation(i int) (Conversation, error) {
	if err := d.readable(d.path, i, len(d.off)); err != nil {
		return Conversation{}, err
	}
	raw := make([]byte, d.n[i])
	if _, err := d.f.ReadAt(raw, d.off[i]); err != nil {
		return Conversation{}, fmt.Errorf("re-read %s at byte %d: %w", d.path, d.off[i], err)
	}
	var e shareGPTEntry
	err := json.Unmarshal(raw, &e)
	pairs := e.pairs()
	counts := d.counts[2*d.start[i] : 2*d.start[i+1]]
	if err != nil || 2*len(pairs) != len(counts) {
		return Conversation{}, fmt.Errorf("re-read %s at byte %d: the entry changed since the file was opened", d.path, d.off[i])
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
