package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// promptColumns are the public datasets of one prompt per record (AIPerf's
// HFInstructionResponseDatasetLoader): the record's fields the prompt is
// made of and how. Read from a local copy (JSON array, JSON Lines or
// Parquet, as Hugging Face serves them); nothing is downloaded.
var promptColumns = map[string]promptColumn{
	// AI-MO/NuminaMath-TIR, AI-MO/aimo-validation-aime, AI-MO/NuminaMath-CoT
	// and AI-MO/NuminaMath-1.5: the math problem, sent as it is.
	PublicAIMO:          {fields: []string{"problem"}},
	PublicAIMOAIME:      {fields: []string{"problem"}},
	PublicAIMONuminaCoT: {fields: []string{"problem"}},
	PublicAIMONumina15:  {fields: []string{"problem"}},
	// likaixin/InstructCoder: the code, then the edit asked for, as vLLM's
	// benchmark (InstructCoderDataset) builds the prompt.
	PublicInstructCoder: {fields: []string{"input", "instruction"}, format: func(v []string) string {
		return v[0] + "\n\n" + v[1] + " Just output the code, do not include any explanation."
	}},
}

// promptColumn says how a record becomes a prompt: the string fields it
// needs, joined by format (the first field alone when nil).
type promptColumn struct {
	fields []string
	format func(values []string) string
}

// prompt builds a record's prompt; "" (kept out, as AIPerf skips it) when
// its fields are null or blank.
func (c promptColumn) prompt(raw []byte) (string, *problem) {
	var rec map[string]json.RawMessage
	if ps := decodeLine(raw, &rec); ps != nil {
		return "", &ps[0]
	}
	values := make([]string, len(c.fields))
	blank := false
	for i, f := range c.fields {
		v, ok := rec[f]
		if !ok {
			p := problemf(f, "missing: expected the record's %s (a string)", f)
			return "", &p
		}
		if string(v) == "null" {
			blank = true
			continue
		}
		if err := json.Unmarshal(v, &values[i]); err != nil {
			p := problemf(f, "expected a string, got %s", jsonKindOf(v))
			return "", &p
		}
		blank = blank || strings.TrimSpace(values[i]) == ""
	}
	switch {
	case blank:
		return "", nil
	case c.format == nil:
		return values[0], nil
	}
	return c.format(values), nil
}

// promptDataset is a public dataset of one prompt per record: each record
// with a prompt is a conversation of one turn, asking for --osl tokens.
type promptDataset struct {
	o    Options
	name string
	col  promptColumn
	rf   *recordFile
	tok  tokenizer.Tokenizer
	files
}

// openPromptDataset indexes the local file of public dataset o.PublicDataset.
func openPromptDataset(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	name := o.PublicDataset
	rf, err := openRecordFile(o.InputFile)
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", name, err)
	}
	d := &promptDataset{o: o, name: name, col: promptColumns[name], rf: rf, tok: tok}
	shape := fmt.Sprintf("{%q: …} records", strings.Join(d.col.fields, `": …, "`))
	records, err := rf.index(ctx, shape, func(raw []byte) (bool, *problem) {
		text, p := d.col.prompt(raw)
		return text != "", p
	})
	if err == nil && rf.Len() == 0 {
		err = &LineError{Path: rf.path, Msg: fmt.Sprintf("all %d records have a blank %s: nothing to send", records, strings.Join(d.col.fields, " or "))}
	}
	if err != nil {
		rf.f.Close()
		return nil, fmt.Errorf("%s dataset: %w", name, err)
	}
	d.files.list = []*os.File{rf.f} // a Parquet file's records are in their spill now
	return d, nil
}

func (d *promptDataset) Len() int { return d.rf.Len() }

// Conversation reads record i back as a conversation of one turn.
func (d *promptDataset) Conversation(i int) (Conversation, error) {
	if err := d.readable(d.rf.path, i, d.rf.Len()); err != nil {
		return Conversation{}, err
	}
	raw, err := d.rf.record(i)
	if err != nil {
		return Conversation{}, err
	}
	text, p := d.col.prompt(raw)
	if p != nil || text == "" {
		return Conversation{}, fmt.Errorf("re-read %s: the record changed since the file was opened", d.rf.where(i))
	}
	t := Turn{Text: text, InputTokens: d.tok.Count(text), MaxTokens: outputTokens(d.o, nil, uint64(i))}
	return Conversation{ID: fmt.Sprintf("%s-%d", d.name, i), Mode: DeltasWithoutResponses, Turns: []Turn{t}}, nil
}

func (d *promptDataset) Schedule() []Timed { return nil }

func (d *promptDataset) Sampling() string { return samplingOr(d.o, SamplingSequential) }

func (d *promptDataset) turnCount() int { return d.rf.Len() }
