package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// streamPool keys random_pool's draws.
const streamPool = streamPrefix + 1

// pool is one random_pool file, indexed: each row's byte offset and length.
type pool struct {
	path string
	f    *os.File
	off  []int64
	n    []uint32
}

// poolDataset is a random_pool: Entries single-turn conversations drawn at
// load, with replacement, from one pool (a file) or from each pool of a
// directory (one pool per file, in name order), the i-th draws of all
// pools merged into conversation i's one turn.
type poolDataset struct {
	o       Options
	tok     tokenizer.Tokenizer
	name    string
	pools   []*pool
	samples [][]int32 // per pool, the row of each conversation
	media   *fileMedia
	files
}

// checkPoolRow validates a random_pool line (AIPerf's RandomPool: the text
// fields of single_turn).
func checkPoolRow(line []byte, fm *fileMedia) (rowInfo, []problem) {
	var r turnRecord
	if ps := decodeLine(line, &r); ps != nil {
		return rowInfo{}, ps
	}
	if ps := append(checkType(r.Type, TypeRandomPool), r.check("", true, fm)...); len(ps) > 0 {
		return rowInfo{}, ps
	}
	return rowInfo{turns: 1}, nil
}

// openRandomPool indexes the pool files of o.InputFile (a file, or a
// directory when dir) and draws the conversations.
func openRandomPool(ctx context.Context, tok tokenizer.Tokenizer, o Options, dir bool) (Dataset, error) {
	if o.FixedSchedule {
		return nil, errors.New("random_pool dataset: a fixed schedule needs timestamps, and random_pool rows have none")
	}
	d := &poolDataset{o: o, tok: tok, name: filepath.Base(o.InputFile)}
	paths := []string{o.InputFile}
	if dir {
		entries, err := os.ReadDir(o.InputFile)
		if err != nil {
			return nil, fmt.Errorf("random_pool dataset: %w", err)
		}
		paths = paths[:0]
		for _, e := range entries {
			if e.Type().IsRegular() {
				paths = append(paths, filepath.Join(o.InputFile, e.Name()))
			}
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("random_pool dataset: directory %s holds no files", o.InputFile)
		}
	}
	var errs []error
	d.media = newFileMedia(o.InputFile)
	check := withTypeHint(TypeRandomPool, checkerFor(TypeRandomPool, 0, d.media))
	for _, path := range paths {
		p, err := indexPool(ctx, path, check)
		if p != nil {
			d.pools, d.list = append(d.pools, p), append(d.list, p.f)
		}
		if err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) > 0 {
		d.Close()
		return nil, fmt.Errorf("random_pool dataset: %w", joinErrs(errs))
	}
	r := rand.New(rand.NewPCG(uint64(o.Seed), streamPool))
	n := o.entries()
	for _, p := range d.pools {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(r.IntN(len(p.off)))
		}
		d.samples = append(d.samples, s)
	}
	return d, nil
}

// indexPool indexes one pool file.
func indexPool(ctx context.Context, path string, check func([]byte) (rowInfo, []problem)) (*pool, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	p := &pool{path: path, f: f}
	ps := problems{path: path}
	err = checkLines(ctx, f, check, func(line []byte, no int, off int64, _ rowInfo, lps []problem) {
		if lps != nil {
			ps.addAll(no, lps)
		} else {
			p.off, p.n = append(p.off, off), append(p.n, uint32(len(line)))
		}
	})
	switch {
	case err != nil:
		return p, fmt.Errorf("%s: %w", path, err)
	case !ps.empty():
		return p, ps.err()
	case len(p.off) == 0:
		return p, &LineError{Path: path, Msg: "no records: the file is empty or holds only blank lines"}
	}
	return p, nil
}

// joinErrs joins the errors of several files into one.
func joinErrs(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%d files have problems:\n%s", len(errs), strings.Join(msgs, "\n"))
}

func (d *poolDataset) Len() int { return len(d.samples[0]) }

// Conversation reads back conversation i's draw from every pool and merges
// their texts, in pool order, into one turn (joined by newlines).
func (d *poolDataset) Conversation(i int) (Conversation, error) {
	if err := d.readable(d.o.InputFile, i, d.Len()); err != nil {
		return Conversation{}, err
	}
	var texts []string
	var items []media.Item
	for k, p := range d.pools {
		row := d.samples[k][i]
		line := make([]byte, p.n[row])
		if _, err := p.f.ReadAt(line, p.off[row]); err != nil {
			return Conversation{}, fmt.Errorf("re-read %s at byte %d: %w", p.path, p.off[row], err)
		}
		var r turnRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return Conversation{}, fmt.Errorf("re-read %s at byte %d (was the file changed since it was opened?): %w", p.path, p.off[row], err)
		}
		t, _ := r.texts("")
		texts = append(texts, t...)
		refs, _ := r.mediaRefs("", true)
		got, err := d.media.list(refs)
		if err != nil {
			return Conversation{}, fmt.Errorf("%s at byte %d: %w", p.path, p.off[row], err)
		}
		items = append(items, got...)
	}
	text := strings.Join(texts, "\n")
	t := Turn{Text: text, InputTokens: d.tok.Count(text), MaxTokens: outputTokens(d.o, nil, uint64(i)), Media: items}
	return Conversation{ID: fmt.Sprintf("%s#%d", d.name, i), Turns: []Turn{t}, Mode: DeltasWithoutResponses}, nil
}

func (d *poolDataset) Schedule() []Timed { return nil }

func (d *poolDataset) Sampling() string { return samplingOr(d.o, SamplingShuffle) }

func (d *poolDataset) turnCount() int { return d.Len() }
