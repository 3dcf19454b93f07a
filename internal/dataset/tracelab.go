package dataset

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// TypeTraceLab is the TraceLab (uw-syfi) agentic coding corpus (AIPerf's
// tracelab): a JSONL file, optionally gzipped, of one row per LLM round,
// grouped into sessions by session_id and replayed as weka_trace traces
// converted in memory (tracelabsource.go).
const TypeTraceLab = "tracelab"

// TraceLabBlockSize is the tokens per synthesised hash id of a tracelab
// corpus when --prompt-input-tokens-block-size is not given (AIPerf's
// plugin metadata).
const TraceLabBlockSize = 64

// traceLabMaxBytes caps the JSONL text read from a tracelab file, after
// decompression: a gzip bomb (or a corpus several times the published
// one's 650 MB) is refused once it has inflated this much.
var traceLabMaxBytes int64 = 4 << 30

// traceLabMaxSessions caps the sessions of a corpus: each costs about 240
// bytes kept whatever its rows hold, so the cap bounds what a corpus of
// bare session ids (which gzips tenfold) can make the reader hold.
var traceLabMaxSessions = 1 << 20

// traceLabDetectKeys are the keys whose presence in a first record makes a
// file a TraceLab corpus (AIPerf's detection).
var traceLabDetectKeys = []string{"session_id", "round_index", "input_tokens_total", "prefix_tokens", "newly_append_tokens", "timing_events"}

// traceLabSuffixes are the names a TraceLab file is detected under.
var traceLabSuffixes = []string{".jsonl", ".jsonl.gz", ".json.gz", ".gz"}

// errTraceLabTooLarge is the read error past traceLabMaxBytes, and
// errTraceLabBomb that of a stream that inflates as no JSONL does.
var (
	errTraceLabTooLarge = errors.New("too large")
	errTraceLabBomb     = errors.New("a gzip bomb")
)

// A gzip stream that has inflated more than traceLabBombAfter bytes at
// more than traceLabBombRatio times its compressed size is a bomb (JSONL
// compresses about tenfold; a stream of blank lines, a thousandfold), so
// that it is refused in seconds rather than at traceLabMaxBytes.
var traceLabBombAfter int64 = 256 << 20 // a variable for its test

const traceLabBombRatio = 500

// cappedReader fails once more than max bytes have been read through it,
// or, when in counts the compressed bytes under it, once what it inflates
// to is a bomb.
type cappedReader struct {
	r   io.Reader
	in  *countingReader // nil: not compressed
	n   int64
	max int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	switch {
	case c.n > c.max:
		return 0, errTraceLabTooLarge
	case c.in != nil && c.n > traceLabBombAfter && c.n > traceLabBombRatio*c.in.n:
		return 0, errTraceLabBomb
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// traceLabText opens path's JSONL text: the file, or what it inflates to
// when it starts with gzip's magic bytes (several concatenated members are
// read as one, as gzip -d does), read through a cap of traceLabMaxBytes.
func traceLabText(path string) (io.Reader, io.Closer, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	in := &countingReader{r: f}
	br := bufio.NewReaderSize(in, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		return &cappedReader{r: zr, in: in, max: traceLabMaxBytes}, f, nil
	}
	return &cappedReader{r: br, max: traceLabMaxBytes}, f, nil
}

// isTraceLabFile reports whether path holds a TraceLab corpus: a file
// named as JSONL (optionally gzipped) whose first record has every one of
// traceLabDetectKeys.
func isTraceLabFile(path string) bool {
	if !slices.ContainsFunc(traceLabSuffixes, func(suffix string) bool { return strings.HasSuffix(path, suffix) }) {
		return false
	}
	r, c, err := traceLabText(path)
	if err != nil {
		return false
	}
	defer c.Close()
	line, _, err := firstRecord(context.Background(), r)
	var first map[string]json.RawMessage
	if err != nil || json.Unmarshal(line, &first) != nil {
		return false
	}
	for _, k := range traceLabDetectKeys {
		if _, ok := first[k]; !ok {
			return false
		}
	}
	return true
}

// traceLabJoin holds AIPerf's subagent-join knobs, read from its
// environment variables.
type traceLabJoin struct {
	on, codex  bool
	minSpawnMs float64
}

// The environment variables of the subagent join, AIPerf's.
const (
	envTraceLabJoin      = "AIPERF_DATASET_TRACELAB_SUBAGENT_JOIN"
	envTraceLabCodexJoin = "AIPERF_DATASET_TRACELAB_CODEX_SUBAGENT_JOIN"
	envTraceLabMinSpawn  = "AIPERF_DATASET_TRACELAB_MIN_SPAWN_MS"
)

// traceLabJoinFromEnv reads the join's knobs: both joins on and a 10 s
// minimum spawn unless the environment says otherwise.
func traceLabJoinFromEnv() (traceLabJoin, error) {
	j := traceLabJoin{on: true, codex: true, minSpawnMs: 10000}
	var errs []error
	for _, b := range []struct {
		name string
		v    *bool
	}{{envTraceLabJoin, &j.on}, {envTraceLabCodexJoin, &j.codex}} {
		s, ok := os.LookupEnv(b.name)
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "1", "true", "t", "yes", "y", "on":
			*b.v = true
		case "0", "false", "f", "no", "n", "off":
			*b.v = false
		default:
			errs = append(errs, fmt.Errorf("%s: expected true or false, got %q", b.name, s))
		}
	}
	if s, ok := os.LookupEnv(envTraceLabMinSpawn); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%s: expected an integer of milliseconds ≥ 0, got %q", envTraceLabMinSpawn, s))
		}
		j.minSpawnMs = float64(n)
	}
	return j, errors.Join(errs...)
}

// openTraceLab reads a TraceLab corpus, converts its sessions into Weka
// traces in memory (subagents nested by timing containment) and opens them
// as a weka_trace set is opened, so that both replay through one
// reconstruction. The replay controls a weka_trace takes are taken; the
// others are refused.
func openTraceLab(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	if o.UUIDAndStrip {
		return nil, uuidStripRefused(TypeTraceLab)
	}
	r := o.Replay
	r.TraceIdleGapCapMs, r.ThinkTimeOnly, r.MaxContext = nil, false, 0
	if err := errors.Join(r.refuse(TypeTraceLab), r.refuseFormatControls(TypeTraceLab), o.refuseWekaBasis(TypeTraceLab)); err != nil {
		return nil, err
	}
	block := o.BlockSize
	if block == 0 {
		block = TraceLabBlockSize
	}
	join, err := traceLabJoinFromEnv()
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", TypeTraceLab, err)
	}
	src, note, err := convertTraceLab(ctx, o.InputFile, block, join)
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", TypeTraceLab, err)
	}
	limit := 0
	if o.Entries > 0 && o.Entries != DefaultEntries { // an explicit 100 cannot be told from the default
		limit = o.Entries
	}
	w, err := openWekaSet(ctx, tok, o, TypeTraceLab, src, WekaBasisAbsolute, limit)
	if err != nil {
		return nil, err
	}
	w.note = note
	return w, nil
}

// convertTraceLab reads the corpus at path and plans its traces: a source
// whose traces are rebuilt from the sessions' rounds when read, and a line
// saying what the conversion found.
func convertTraceLab(ctx context.Context, path string, block int, join traceLabJoin) (*traceLabSource, string, error) {
	if block <= 0 {
		return nil, "", fmt.Errorf("TraceLab block size must be positive, got %d", block)
	}
	c, err := readTraceLab(ctx, path, join)
	if err != nil {
		return nil, "", err
	}
	return c.plan(ctx, block, join)
}

// readTraceLab reads and checks every row of the corpus at path, grouping
// the rounds of the rows with a session_id by session (rows without one
// are skipped, as AIPerf skips them). Every problem is listed with its line
// and field; nothing is kept of the rows after the first problem.
func readTraceLab(ctx context.Context, path string, join traceLabJoin) (*tlCorpus, error) {
	r, f, err := traceLabText(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read TraceLab file %s: %w", path, err)
	}
	defer f.Close()
	c := newTLCorpus(path)
	ps := problems{path: path}
	crowded := 0 // the line of the session past traceLabMaxSessions
	err = scanLines(ctx, r, func(line []byte, no int, _ int64) bool {
		if p, bad := invalidUTF8(line); bad {
			ps.add(no, p)
			return true
		}
		var row traceLabRow
		if probs := decodeLine(line, &row); probs != nil {
			ps.addAll(no, probs)
			return true
		}
		info, probs := checkTraceLabRow(&row, join.minSpawnMs)
		if probs != nil {
			ps.addAll(no, probs)
			return true
		}
		if ps.empty() && deref(row.SessionID) != "" && !c.add(&row, info, no) {
			crowded = no
			return false
		}
		return true
	})
	switch {
	case crowded > 0:
		return nil, &LineError{Path: path, Line: crowded, Msg: fmt.Sprintf("more than %d sessions: more than tracelab replay "+
			"holds (split the corpus, or take a slice: zcat %s | head -20000 | gzip > slice.jsonl.gz)", traceLabMaxSessions, path)}
	case errors.Is(err, errTraceLabTooLarge):
		return nil, &LineError{Path: path, Msg: fmt.Sprintf("more than %d MiB of JSONL text (decompressed): a gzip bomb, or a corpus "+
			"larger than tracelab replay reads (split it, or take a slice: zcat %s | head -20000 | gzip > slice.jsonl.gz)", traceLabMaxBytes>>20, path)}
	case errors.Is(err, errTraceLabBomb):
		return nil, &LineError{Path: path, Msg: fmt.Sprintf("a gzip bomb: past %d MiB its text inflates more than %d-fold "+
			"(JSONL compresses about tenfold)", traceLabBombAfter>>20, traceLabBombRatio)}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("%s: %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("cannot read TraceLab file %s: %w", path, err)
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	if len(c.sessions) == 0 {
		return nil, &LineError{Path: path, Msg: fmt.Sprintf("no TraceLab sessions found in '%s': every row must carry a 'session_id'", path)}
	}
	c.finish()
	return c, nil
}

// round6 rounds seconds to the microsecond, as AIPerf's conversion writes
// its times.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
