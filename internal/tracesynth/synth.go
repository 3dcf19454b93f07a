package tracesynth

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/outputfile"
)

// Stats describe a synthesis.
type Stats struct {
	Rows, Written int // rows read, rows written
	HashIDs       int // distinct hash ids of the input
	SharedIDs     int // of them, occurring more than once
	MaxDepth      int // the most hash ids of a row (the prefix tree's depth)
	// Lines are the input lines of the rows written, in order: each is
	// written PrefixRootMultiplier times, one line after another.
	Lines []int32
}

// InputLine is the input line of line n of the synthesis (1-based) with
// roots copies of each row; 0 past its end.
func (st Stats) InputLine(n, roots int) int {
	if k := (n - 1) / max(roots, 1); n >= 1 && k < len(st.Lines) {
		return int(st.Lines[k])
	}
	return 0
}

// Synthesize reads the mooncake trace at in twice and writes its synthesis
// with p to out. A malformed input is an error listing every problem, and
// then nothing is written.
func Synthesize(ctx context.Context, in string, out io.Writer, p Params) (Stats, error) {
	if err := p.Validate(p.prefix()); err != nil {
		return Stats{}, err
	}
	s := &synthesis{p: p, ids: map[int64]bool{}, sessions: map[string]bool{}, copies: map[copyKey]string{}}
	var st Stats
	so := dataset.ScanOptions{BlockSize: p.BlockSize, AsProfile: p.Command}
	err := dataset.ScanTraceWith(ctx, in, so, func(row dataset.TraceRow) error {
		st.Rows++
		if row.SessionID != nil && p.PrefixRootMultiplier > 1 {
			s.sessions[*row.SessionID] = true
		}
		st.MaxDepth = max(st.MaxDepth, len(row.HashIDs))
		for _, id := range row.HashIDs {
			if again, seen := s.ids[id]; !seen {
				s.ids[id] = false
			} else if !again {
				s.ids[id] = true
				st.SharedIDs++
				s.maxShared = max(s.maxShared, id)
			}
		}
		return nil
	})
	if err != nil {
		return st, NameBlockSizeFlag(err, p.flag("block-size"))
	}
	st.HashIDs = len(s.ids)
	s.start()
	w := bufio.NewWriterSize(out, 1<<20)
	err = dataset.ScanTraceWith(ctx, in, so, func(row dataset.TraceRow) error {
		st.Lines = append(st.Lines, int32(min(row.Line, math.MaxInt32)))
		for c := range p.PrefixRootMultiplier {
			if err := s.write(w, row, c); err != nil {
				return err
			}
			st.Written++
		}
		return nil
	})
	if err != nil {
		return st, NameBlockSizeFlag(err, p.flag("block-size"))
	}
	return st, w.Flush()
}

// profileBlockSizeFlag is the flag the trace reader's block-size problems
// name: profile's, which other commands name by their own.
const profileBlockSizeFlag = "--prompt-input-tokens-block-size"

// NameBlockSizeFlag is err, from reading a trace with a command whose
// block-size flag is flag (analyze-trace's and synthesize-trace's
// --block-size), with profile's flag, which the trace reader names in its
// problems, named as flag; errors.Is and errors.As see err.
func NameBlockSizeFlag(err error, flag string) error {
	if err == nil || flag == profileBlockSizeFlag || !strings.Contains(err.Error(), profileBlockSizeFlag) {
		return err
	}
	return renamed{err, strings.ReplaceAll(err.Error(), profileBlockSizeFlag, flag)}
}

// Reworded is err shown with text.
func Reworded(err error, text string) error { return renamed{err, text} }

// renamed is an error shown with another text.
type renamed struct {
	err  error
	text string
}

func (r renamed) Error() string { return r.text }
func (r renamed) Unwrap() error { return r.err }

// synthesis is the state of the second pass.
type synthesis struct {
	p         Params
	ids       map[int64]bool // hash id → occurs more than once
	maxShared int64
	stretch   int   // whole blocks a context block becomes
	next      int64 // the next fresh hash id
	nextOK    bool  // next is within the int64 range
	rowIDs    []int64
	isl       int
	budget    int // the most hash ids a row may get
	// sessions are the session ids taken: the trace's and the copies'
	// made so far; copies names copy c of a session.
	sessions map[string]bool
	copies   map[copyKey]string
}

type copyKey struct {
	id string
	c  int
}

// copyName is the session id of copy c (> 0) of session id: id#c, with
// another #c for as long as that names a session already (the trace may
// hold "a#1" beside "a"), so that no two sessions merge.
func (s *synthesis) copyName(id string, c int) string {
	if name, ok := s.copies[copyKey{id, c}]; ok {
		return name
	}
	name := fmt.Sprintf("%s#%d", id, c)
	for s.sessions[name] {
		name = fmt.Sprintf("%s#%d", name, c)
	}
	s.sessions[name], s.copies[copyKey{id, c}] = true, name
	return name
}

// start sets where fresh ids begin: past the stretched shared ids, as
// AIPerf numbers them.
func (s *synthesis) start() {
	s.stretch = 1
	if s.p.PrefixLenMultiplier > 1 {
		s.stretch = int(s.p.PrefixLenMultiplier)
	}
	// past the int64 range no fresh id is made: fresh refuses the rows
	// that need one
	s.next, s.nextOK = mulAdd(s.maxShared, int64(s.stretch), int64(s.stretch)+1) // (max+1)×stretch+1
	s.budget = math.MaxInt
	if s.p.MaxISL > 0 { // the ids past the cap are dropped: never made
		s.budget = (s.p.MaxISL + s.p.BlockSize - 1) / s.p.BlockSize
	}
}

// fresh appends n new hash ids to ids, at most up to the budget; ids past
// the int64 range are an error.
func (s *synthesis) fresh(ids []int64, n int) ([]int64, error) {
	n = min(n, s.budget-len(ids))
	if n <= 0 {
		return ids, nil
	}
	if !s.nextOK || s.next > math.MaxInt64-int64(n) {
		return ids, &dataset.LineError{Field: "hash_ids", Msg: fmt.Sprintf(
			"its fresh hash ids, numbered past the largest shared id %d (stretched %d-fold), would pass the int64 range: renumber the trace's hash ids below 2^62",
			s.maxShared, s.stretch)}
	}
	for range n {
		ids = append(ids, s.next)
		s.next++
	}
	return ids, nil
}

// mulAdd is h×m+c for m ≥ 1 and c ≥ 0, and whether it fits in an int64.
func mulAdd(h, m, c int64) (int64, bool) {
	p := h * m
	if p/m != h || p > math.MaxInt64-c {
		return 0, false
	}
	return p + c, true
}

// checkIDs refuses ids whose copies, each id h written as h×n+c for c in
// [0, n), would pass the int64 range (n > 1, the prefix root multiplier,
// given with flag).
func checkIDs(ids []int64, n int64, flag string) error {
	for _, h := range ids {
		_, lo := mulAdd(h, n, 0)
		_, hi := mulAdd(h, n, n-1)
		if !lo || !hi {
			return fmt.Errorf("hash id %d × %d (%s) passes the int64 range: renumber the trace's hash ids below 2^62 or lower %s", h, n, flag, flag)
		}
	}
	return nil
}

// transform sets s.rowIDs and s.isl to row's synthetic hash ids and input
// length (its own when it has no hash ids). A row that would grow past
// what a trace row may hold (twice that, before --max-isl) is an error,
// before its ids are made.
func (s *synthesis) transform(row dataset.TraceRow) error {
	b, ids := s.p.BlockSize, row.HashIDs
	s.rowIDs, s.isl = s.rowIDs[:0], row.InputLength
	if len(ids) == 0 {
		return nil
	}
	k := 0
	for k < len(ids) && s.ids[ids[k]] {
		k++
	}
	m := s.p.PrefixLenMultiplier
	// the shared blocks stretched, and the rest of the prompt scaled
	rest := float64(max(row.InputLength-k*b, 0)) * s.p.PromptLenMultiplier
	if blocks := float64(k)*max(m, 1) + rest/float64(b); s.p.MaxISL == 0 && blocks*float64(b) > 2*dataset.MaxInputLength {
		return fmt.Errorf("its synthetic input would be about %.0f tokens, past the %d a trace row may hold: lower the multipliers or set %s",
			blocks*float64(b), dataset.MaxInputLength, s.p.flag("max-isl"))
	}
	switch {
	case m > 1:
		for _, h := range ids[:k] {
			for j := range min(s.stretch, s.budget-len(s.rowIDs)) {
				id, ok := mulAdd(h, int64(s.stretch), int64(j))
				if !ok {
					return &dataset.LineError{Field: "hash_ids", Msg: fmt.Sprintf(
						"hash id %d stretched %d-fold passes the int64 range: renumber the trace's hash ids below 2^62 or lower %s", h, s.stretch, s.p.flag("prefix-len-multiplier"))}
				}
				s.rowIDs = append(s.rowIDs, id)
			}
		}
		var err error
		if s.rowIDs, err = s.fresh(s.rowIDs, int(math.Ceil(float64(k)*m))-k*s.stretch); err != nil {
			return err
		}
	case m < 1 && k > 0:
		s.rowIDs = append(s.rowIDs, ids[:max(1, int(float64(k)*m))]...)
	default:
		s.rowIDs = append(s.rowIDs, ids[:k]...)
	}
	context := len(s.rowIDs) * b
	prompt := row.InputLength - k*b
	if prompt < 0 { // every block shared, the last one partial: keep its fill
		s.isl = context + prompt
		return nil
	}
	prompt = int(float64(prompt) * s.p.PromptLenMultiplier)
	if context == 0 {
		prompt = max(prompt, 1)
	}
	s.isl = context + prompt
	var err error
	s.rowIDs, err = s.fresh(s.rowIDs, (prompt+b-1)/b)
	return err
}

// write writes copy c of row's synthesis.
func (s *synthesis) write(w *bufio.Writer, row dataset.TraceRow, c int) error {
	if c == 0 {
		if err := s.transform(row); err != nil {
			if le := (*dataset.LineError)(nil); errors.As(err, &le) {
				return le
			}
			return &dataset.LineError{Field: "input_length", Msg: err.Error()}
		}
		if n := int64(s.p.PrefixRootMultiplier); n > 1 {
			if err := checkIDs(s.rowIDs, n, s.p.flag("prefix-root-multiplier")); err != nil {
				return &dataset.LineError{Field: "hash_ids", Msg: err.Error()}
			}
		}
	}
	ids, isl := s.rowIDs, s.isl
	if isl > dataset.MaxInputLength && (s.p.MaxISL == 0 || s.p.MaxISL > dataset.MaxInputLength) {
		return &dataset.LineError{Field: "input_length", Msg: fmt.Sprintf("its synthetic input length %d is past the %d a trace row may hold: lower the multipliers or set %s",
			isl, dataset.MaxInputLength, s.p.flag("max-isl"))}
	}
	if s.p.MaxISL > 0 && isl > s.p.MaxISL {
		isl = s.p.MaxISL
		ids = ids[:min(len(ids), (isl+s.p.BlockSize-1)/s.p.BlockSize)]
	}
	n := int64(s.p.PrefixRootMultiplier)
	set := map[string]func(b []byte) []byte{}
	if len(row.HashIDs) > 0 {
		set["hash_ids"] = func(b []byte) []byte { return appendIDs(b, ids, n, int64(c)) }
	}
	if row.InputLength > 0 {
		set["input_length"] = func(b []byte) []byte { return appendInt(b, int64(isl)) }
	}
	if !math.IsNaN(row.Timestamp) && s.p.SpeedupRatio > 0 {
		ts, err := s.timestamp(row.Timestamp)
		if err != nil {
			return err
		}
		set["timestamp"] = func(b []byte) []byte { return appendInt(b, ts) }
	}
	if osl, err := s.outputLength(row); err != nil {
		return fmt.Errorf("line %d: %w", row.Line, err)
	} else if osl != row.OutputLength {
		set["output_length"] = func(b []byte) []byte { return appendInt(b, int64(osl)) }
	}
	if row.SessionID != nil && c > 0 {
		name := s.copyName(*row.SessionID, c)
		set["session_id"] = func(b []byte) []byte { return appendString(b, name) }
	}
	line, err := rewrite(row.Raw, set)
	if err != nil {
		return fmt.Errorf("line %d: %w", row.Line, err)
	}
	_, err = w.Write(line)
	return err
}

// timestamp is a row's timestamp ts divided by the speed-up ratio, in
// whole ms. One past what a trace timestamp may be (2^53 ms, which
// analyze-trace and profile accept; past the int64 range it would wrap)
// is refused, naming the flag and the least ratio that keeps it.
func (s *synthesis) timestamp(ts float64) (int64, error) {
	r := s.p.SpeedupRatio
	if scaled := ts / r; scaled <= dataset.MaxTimestampMs {
		return int64(scaled), nil
	}
	return 0, &dataset.LineError{Field: "timestamp", Msg: fmt.Sprintf(
		"timestamp %s divided by %s %g is %g ms, past the %d ms a trace timestamp may be: raise %s to at least %g",
		strconv.FormatFloat(ts, 'f', -1, 64), s.p.flag("speedup-ratio"), r, ts/r, int64(dataset.MaxTimestampMs), s.p.flag("speedup-ratio"), minRatio(ts))}
}

// minRatio is the least speed-up ratio that keeps timestamp ts within a
// trace's, shown to 3 significant digits and rounded up.
func minRatio(ts float64) float64 {
	x := ts / dataset.MaxTimestampMs
	unit := math.Pow(10, math.Floor(math.Log10(x))-2)
	r, _ := strconv.ParseFloat(strconv.FormatFloat(math.Ceil(x/unit)*unit, 'g', 3, 64), 64)
	return r
}

// appendIDs writes ids as a JSON list, each h as h×n+c.
func appendIDs(b []byte, ids []int64, n, c int64) []byte {
	b = append(b, '[')
	for i, h := range ids {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendInt(b, h*n+c)
	}
	return append(b, ']')
}

// WriteFile synthesizes the trace at in into the file out, written whole
// or not at all, as outputfile.Write writes it (a FIFO, a device but a
// character device, or a directory at out is refused, never replaced). An
// out that is the input file, under whatever name, is refused.
func WriteFile(ctx context.Context, in, out string, p Params) (Stats, error) {
	if outputfile.SameFile(in, out) {
		return Stats{}, fmt.Errorf("the output file %s is the input file %s: write the synthetic trace elsewhere", out, in)
	}
	var st Stats
	_, err := outputfile.Write(out, func(w io.Writer) error {
		var err error
		st, err = Synthesize(ctx, in, w, p)
		return err
	})
	return st, err
}

// outputLength is row's output length scaled by --output-len-multiplier
// (rounded half to even, as AIPerf's Python round; at least 1, the least a
// trace row may give) and then capped by --max-osl; a row without one
// keeps none.
func (s *synthesis) outputLength(row dataset.TraceRow) (int, error) {
	osl := row.OutputLength
	if m := s.p.OutputLenMultiplier; m != 1 && osl > 0 {
		x := math.RoundToEven(float64(osl) * m)
		if x > dataset.MaxInputLength {
			return 0, fmt.Errorf("output_length %d × %g is %.0f, past the %d a trace row may hold: lower %s or set %s",
				osl, m, x, dataset.MaxInputLength, s.p.flag("output-len-multiplier"), s.p.flag("max-osl"))
		}
		osl = max(1, int(x))
	}
	if s.p.MaxOSL > 0 && osl > s.p.MaxOSL {
		osl = s.p.MaxOSL
	}
	return osl, nil
}
