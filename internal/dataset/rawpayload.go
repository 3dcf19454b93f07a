package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// checkRawPayload validates a raw_payload line as AIPerf's RawPayload:
// a whole request body, an object with a "messages" list.
func checkRawPayload(line []byte) (rowInfo, []problem) {
	var r struct {
		Messages json.RawMessage `json:"messages"`
	}
	if ps := decodeLine(line, &r); ps != nil {
		return rowInfo{}, ps
	}
	if kind := jsonKindOf(r.Messages); !isSet(r.Messages) || kind != "a list" {
		return rowInfo{}, []problem{problemf("messages", `expected a list of messages (a raw payload is a request body with a "messages" list), got %s`, kind)}
	}
	nan := math.NaN()
	return rowInfo{turns: 1, ts: nan, ts0: nan, first: nan, last: nan, mode: modePayload, context: MessageArrayWithResponses}, nil
}

// payloadTurn is the turn that sends a request body as written, compacted
// (the bytes of the body a recording sent, whatever its indentation).
func (d *fileDataset) payloadTurn(raw []byte) (Turn, error) {
	var body bytes.Buffer
	if err := json.Compact(&body, raw); err != nil {
		return Turn{}, err
	}
	return Turn{Payload: body.Bytes(), InputTokens: d.countPayload(raw)}, nil
}

// rawTurn builds the turn of a raw_payload line.
func (d *fileDataset) rawTurn(c *convBuilder, line []byte) error {
	t, err := d.payloadTurn(line)
	if err != nil {
		return err
	}
	c.Turns = append(c.Turns, t)
	c.Mode = MessageArrayWithResponses
	return nil
}

// rawDir is a raw_payload directory: each .jsonl file one conversation
// (named by the file's stem), its lines the turns in order. Each file is
// checked whole when it is opened and read again when it is sent.
type rawDir struct {
	o     Options
	tok   tokenizer.Tokenizer
	paths []string
	turns int
}

// openRawDir checks every .jsonl file of the directory o.InputFile, in
// name order (other files are ignored, files without lines skipped).
func openRawDir(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	entries, err := os.ReadDir(o.InputFile)
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", TypeRawPayload, err)
	}
	d := &rawDir{o: o, tok: tok}
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		path := filepath.Join(o.InputFile, e.Name())
		n, err := checkRawFile(ctx, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if n > 0 {
			d.paths, d.turns = append(d.paths, path), d.turns+n
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%s dataset: %w", TypeRawPayload, err)
	}
	if len(d.paths) == 0 {
		return nil, fmt.Errorf("%s dataset: directory %s holds no .jsonl file with a payload", TypeRawPayload, o.InputFile)
	}
	if o.FixedSchedule {
		return nil, fmt.Errorf("%s dataset: a fixed schedule needs timestamps, and raw payloads have none", TypeRawPayload)
	}
	return d, nil
}

// checkRawFile checks the lines of one file of a raw_payload directory and
// counts them.
func checkRawFile(ctx context.Context, path string) (int, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	ps := problems{path: path}
	n := 0
	check := withTypeHint(TypeRawPayload, checkRawPayload)
	err = checkLines(ctx, f, check, func(_ []byte, no int, _ int64, _ rowInfo, list []problem) {
		n++
		ps.addAll(no, list)
	})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, ps.err()
}

func (d *rawDir) Len() int { return len(d.paths) }

// Conversation reads file i's payloads.
func (d *rawDir) Conversation(i int) (Conversation, error) {
	if i < 0 || i >= len(d.paths) {
		return Conversation{}, fmt.Errorf("%s: conversation %d out of range [0, %d)", d.o.InputFile, i, len(d.paths))
	}
	path := d.paths[i]
	f, err := inputfile.Open(path)
	if err != nil {
		return Conversation{}, fmt.Errorf("re-read %s: %w", path, err)
	}
	defer f.Close()
	fd := &fileDataset{tok: d.tok}
	c := convBuilder{Conversation: Conversation{ID: strings.TrimSuffix(filepath.Base(path), ".jsonl")}}
	var bad error
	err = scanLines(context.Background(), f, func(line []byte, no int, _ int64) bool {
		if err := fd.rawTurn(&c, line); err != nil {
			bad = fmt.Errorf("re-read %s line %d (was the file changed since it was opened?): %w", path, no, err)
			return false
		}
		return true
	})
	return c.Conversation, errors.Join(err, bad)
}

func (d *rawDir) Schedule() []Timed { return nil }

func (d *rawDir) Sampling() string { return samplingOr(d.o, SamplingSequential) }

func (d *rawDir) Close() error { return nil }

func (d *rawDir) turnCount() int { return d.turns }

// isRawDir reports whether the directory at path holds a .jsonl file whose
// first line is a raw payload (AIPerf's can_load for a directory).
func isRawDir(path string) bool {
	entries, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		if line, _, err := firstLine(context.Background(), filepath.Join(path, e.Name())); err == nil {
			_, ps := checkRawPayload(line)
			return ps == nil
		}
	}
	return false
}
