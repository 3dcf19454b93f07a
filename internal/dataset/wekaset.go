package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// TypeWekaTrace is a Weka KV-cache-tester agentic coding trace (AIPerf's
// weka_trace): a JSON file per conversation, or a directory of them, each
// a main agent's requests and its subagents'.
const TypeWekaTrace = "weka_trace"

// wekaSet is a weka_trace dataset: per conversation (a trace's main agent,
// or one of its subagents) the file it is in, which one it is, its start
// time and its turns; a conversation is read back from its file when it is
// asked for, so the index is a few words per conversation.
type wekaSet struct {
	o     Options
	tok   tokenizer.Tokenizer
	words *words
	kind  string     // TypeWekaTrace, or TypeTraceLab (Kind)
	src   wekaSource // where each trace comes from (wekasource.go)
	convs []wekaConv
	zero  float64
	turns int
	cache wekaCache // the traces read back last, parsed
	// relative is the basis used (auto's choice, wekabasis.go), note what
	// to tell of it and of the source (Notes).
	relative bool
	note     string
}

// wekaConv is one conversation of a weka_trace dataset.
type wekaConv struct {
	file int32
	sub  int32 // the subagent's index among the trace's requests; -1: the main agent
	ts   float64
}

// wekaFiles lists the trace files of path: the file, or a directory's
// .json files in name order.
func wekaFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var list []string // *.json, read as names: a directory's own name may hold glob characters
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			list = append(list, filepath.Join(path, e.Name()))
		}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s: no .json trace files in the directory", path)
	}
	slices.Sort(list)
	return list, nil
}

// isWekaFile reports whether path holds a Weka trace: a JSON object with
// id, block_size and requests (AIPerf's detection).
func isWekaFile(path string) bool {
	f, err := inputfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, maxWekaFile))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		name, _ := tok.(string)
		seen[name] = true
		if seen["id"] && seen["block_size"] && seen["requests"] {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// isWekaDir reports whether path is a directory whose first .json file is
// a Weka trace.
func isWekaDir(path string) bool {
	list, err := wekaFiles(path)
	return err == nil && len(list) > 0 && isWekaFile(list[0])
}

// openWeka reads every trace file of o.InputFile, checking each whole
// (every problem listed), and indexes its conversations (openWekaSet).
func openWeka(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	paths, err := wekaFiles(o.InputFile)
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", TypeWekaTrace, err)
	}
	return openWekaSet(ctx, tok, o, TypeWekaTrace, &wekaFileSource{paths: paths, given: o.WekaBasis}, o.WekaBasis, 0)
}

// openWekaSet reads every trace of src and indexes its conversations: the
// main agent's API calls (one conversation named by the trace's id), and
// each subagent that a main-agent request precedes (a conversation of its
// own, named <id>::sa:<agent_id>, as AIPerf names it), its requests' times
// read on basis (wekabasis.go). A trace is read one at a time, and once.
// A trace with a call of more than --max-context-length tokens is dropped;
// limit > 0 keeps the first limit traces left (AIPerf's filter, then cap).
func openWekaSet(ctx context.Context, tok tokenizer.Tokenizer, o Options, kind string, src wekaSource, basis string, limit int) (*wekaSet, error) {
	b, err := newWekaBasis(basis)
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", kind, err)
	}
	w := &wekaSet{o: o, tok: tok, kind: kind, src: src, cache: newWekaCache(wekaCacheBytes)}
	if w.words, err = blockWords(tok); err != nil {
		return nil, fmt.Errorf("%s dataset: %w", kind, err)
	}
	var errs []error
	dropped, kept := 0, 0
	for i := range src.count() {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s dataset: stopped at %s: %w", kind, src.name(i), err)
		}
		tr, err := w.load(ctx, i, false)
		if err != nil {
			errs = append(errs, err)
			if len(errs) >= maxProblems {
				break
			}
			continue
		}
		b.add(tr, src.name(i)) // the whole input decides auto's basis, dropped traces too
		if c := o.Replay.MaxContext; c > 0 && wekaPeak(tr.wekaTrace) > int64(c) {
			dropped++
			continue
		}
		if limit > 0 && kept == limit {
			continue
		}
		kept++
		for _, rel := range b.bases() {
			w.index(&b.ix[btoi(rel)], tr, int32(i), rel)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s dataset: %w", kind, joinProblems(errs))
	}
	ix := b.done()
	w.convs, w.turns, w.relative, w.note = ix.convs, ix.turns, b.relative, b.note()
	if len(w.convs) == 0 {
		isl := ""
		if o.MaxISL > 0 {
			isl = fmt.Sprintf("has more than %d input tokens (--synthesis-max-isl) or ", o.MaxISL)
		}
		if dropped > 0 {
			isl += fmt.Sprintf("is in one of the %d traces longer than --max-context-length %d, or ", dropped, o.Replay.MaxContext)
		}
		return nil, &LineError{Path: o.InputFile, Msg: fmt.Sprintf("no requests left: every call %sfalls outside the fixed schedule "+
			"window %s, or only subagents without a main-agent call before them are left", isl, offsetWindow(o))}
	}
	switch {
	case o.AutoOffset:
		w.zero = ix.low
	case o.StartOffsetMs != nil:
		w.zero = *o.StartOffsetMs
	}
	return w, nil
}

// joinProblems joins the errors of several files, as problems.err joins
// those of one.
func joinProblems(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	ps := problems{list: errs}
	return ps.err()
}

// parsedWeka is a trace file read and checked, with what every one of its
// conversations needs of the whole: its models' ranks, its subagent
// requests' basis (relative or not) and its idle-gap warp on that basis,
// each computed once.
type parsedWeka struct {
	wekaTrace
	ranks    map[string]int
	relative bool
	warp     *idleWarp
	scan     nestedScan // what its subagent requests tell of their basis
	size     int        // the file's bytes
}

// load reads trace i of the set's source (with its hash ids when ids),
// or stops with ctx.
func (w *wekaSet) load(ctx context.Context, i int, ids bool) (*parsedWeka, error) {
	tr, size, err := w.src.read(ctx, i, ids)
	if err != nil {
		return nil, err
	}
	return &parsedWeka{wekaTrace: tr, ranks: modelRanks(tr), relative: w.relative, warp: w.idleWarp(tr, w.relative),
		scan: scanNested(tr), size: size}, nil
}

// plan lists a trace's conversations: its main agent, then each subagent
// that some main-agent request precedes (AIPerf drops the others: there
// is no turn to spawn them from; nor when --synthesis-max-isl dropped
// that turn) and that has requests.
func (w *wekaSet) plan(tr wekaTrace) []wekaConv {
	out := []wekaConv{{sub: -1}}
	parent := false
	for i, r := range tr.Requests {
		switch {
		case r.Type != "subagent":
			parent = w.o.MaxISL == 0 || r.In <= int64(w.o.MaxISL)
		case parent && len(r.Inner) > 0:
			out = append(out, wekaConv{sub: int32(i)})
		}
	}
	return out
}

// modelRanks maps each model of a trace to its rank, AIPerf's per-trace
// model rewriting: the main model (the first main-agent request's, else
// the first subagent request's) is rank 0, the others follow in order of
// first appearance; rank k is sent as --model k modulo their number.
func modelRanks(tr wekaTrace) map[string]int {
	ranks := map[string]int{}
	add := func(m string) {
		if _, ok := ranks[m]; !ok {
			ranks[m] = len(ranks)
		}
	}
	for _, r := range tr.Requests {
		if r.Type != "subagent" {
			add(r.Model)
			break
		}
	}
	for _, r := range tr.Requests {
		if r.Type != "subagent" {
			add(r.Model)
			continue
		}
		for _, in := range r.Inner {
			add(in.Model)
		}
	}
	return ranks
}

// convTurns builds the turns of conversation sub (-1: the main agent) of
// a trace: each API call a turn whose prompt is in tokens built from its
// hash ids (the trace's block size, its own hash namespace), with
// max(1, out) as its max tokens; sent at t (seconds made ms), or t minus
// the previous turn's t after it. Requests outside the fixed schedule's
// offsets are dropped. first is the first turn's time on the trace's
// clock (ms). Without text the turns have no prompt text: opening the set
// needs their count and times only.
//
// A main agent's call waits for the subagents listed right before it
// (their conversations in subs, by request index; Turn.Join); a subagent
// whose next main-agent call is dropped runs in the background, as AIPerf
// makes it.
func (w *wekaSet) convTurns(tr *parsedWeka, sub int32, subs map[int]int, text bool) (turns []Turn, first float64) {
	calls, base := tr.Requests, wekaRequest{}
	if sub >= 0 {
		base = tr.Requests[sub]
		calls = base.Inner
	}
	ranks, warp := tr.ranks, tr.warp
	h := fnv.New64a()
	h.Write([]byte(tr.ID))
	seed := w.o.Seed ^ int64(h.Sum64())
	prev := math.NaN()
	var pending []int
	for k, r := range calls {
		if r.Type == "subagent" {
			if c, ok := subs[k]; ok {
				pending = append(pending, c)
			}
			continue
		}
		join := pending
		pending = nil
		t := r.T
		if sub >= 0 {
			t = nestedT(base, r, tr.relative)
		}
		if outside(w.o, t*1000) || w.o.MaxISL > 0 && r.In > int64(w.o.MaxISL) {
			continue
		}
		ms := warp.at(t) * 1000
		turn := Turn{MaxTokens: max(1, int(r.Out)), ModelRank: ranks[r.Model], Join: join}
		if sub < 0 && w.o.MaxOSL > 0 { // a subagent's calls keep their recorded out, as AIPerf's
			turn.MaxTokens = min(turn.MaxTokens, w.o.MaxOSL)
		}
		if text {
			turn.Text = w.words.hashPrompt(seed, r.HashIDs, int(r.In), int(tr.BlockSize), uint64(sub+1)<<32|uint64(k))
		}
		turn.InputTokens = int(r.In)
		var delay *float64
		if math.IsNaN(prev) {
			first = ms
		} else {
			delay = new(float64)
			*delay = max(0, ms-prev)
		}
		ts := ms - w.zero
		o := w.o
		if warp != nil { // the compressed timeline's delays are not capped again
			o.DelayCapMs = nil
		}
		timing(o, &turn, &ts, delay)
		if delay != nil && o.Replay.ThinkTimeOnly && !(o.IgnoreDelays && !o.FixedSchedule) {
			// sent its recorded think time after the previous reply
			turn.TimestampMs, turn.HasTimestamp = 0, false
			turn.DelayMs = thinkMs(r) / o.Replay.speedup()
			if c := o.DelayCapMs; c != nil && o.Replay.TraceIdleGapCapMs == nil {
				turn.DelayMs = min(turn.DelayMs, *c)
			}
		}
		turns = append(turns, turn)
		prev = ms
	}
	return turns, first
}

// idleGap is a gap between consecutive request starts of a trace that
// --trace-idle-gap-cap-seconds compresses: from start to end (s), shift
// seconds collapsed before it, excess collapsed in it.
type idleGap struct{ start, end, shift, excess float64 }

// idleWarp maps a trace's times (s) onto its timeline with every gap
// between consecutive request starts (main agent and subagents together)
// compressed to at most the cap, AIPerf's per-trace idle-gap warp; nil
// (the identity) without a cap.
type idleWarp struct {
	cap  float64
	gaps []idleGap
}

func (w *wekaSet) idleWarp(tr wekaTrace, relative bool) *idleWarp {
	if w.o.Replay.TraceIdleGapCapMs == nil {
		return nil
	}
	var starts []float64
	for _, r := range tr.Requests {
		if r.Type != "subagent" {
			starts = append(starts, r.T)
			continue
		}
		for _, in := range r.Inner {
			starts = append(starts, nestedT(r, in, relative))
		}
	}
	slices.Sort(starts)
	iw := &idleWarp{cap: *w.o.Replay.TraceIdleGapCapMs / 1000}
	shift := 0.0
	for k := 1; k < len(starts); k++ {
		if gap := starts[k] - starts[k-1]; gap > iw.cap {
			iw.gaps = append(iw.gaps, idleGap{starts[k-1], starts[k], shift, gap - iw.cap})
			shift += gap - iw.cap
		}
	}
	return iw
}

// at maps time t (s): before a gap it moves by the gaps before; in a gap's
// first cap seconds likewise; later in the gap, to the cap's end. The
// gaps are in time order and apart: the first one not over by t decides.
func (iw *idleWarp) at(t float64) float64 {
	if iw == nil {
		return t
	}
	k := sort.Search(len(iw.gaps), func(k int) bool { return t < iw.gaps[k].end })
	if k == len(iw.gaps) {
		if k == 0 {
			return t
		}
		last := iw.gaps[k-1]
		return t - (last.shift + last.excess) // as the gaps summed them
	}
	g := iw.gaps[k]
	if t >= g.start && t-g.start > iw.cap {
		return g.start - g.shift + iw.cap
	}
	return t - g.shift
}

func (w *wekaSet) Len() int { return len(w.convs) }

// Conversation reads conversation i's trace file back and builds its
// turns.
func (w *wekaSet) Conversation(i int) (Conversation, error) {
	if i < 0 || i >= len(w.convs) {
		return Conversation{}, fmt.Errorf("%s: conversation %d out of range [0, %d)", w.kind, i, len(w.convs))
	}
	c := w.convs[i]
	tr, err := w.cache.get(int(c.file), func() (*parsedWeka, error) { return w.load(context.Background(), int(c.file), true) })
	if err != nil {
		return Conversation{}, fmt.Errorf("re-read %s (was the file changed since it was opened?): %w", w.src.name(int(c.file)), err)
	}
	conv := Conversation{ID: tr.ID, Mode: MessageArrayWithResponses, ModelRanked: true}
	var subs map[int]int
	if c.sub < 0 { // the trace's subagents follow its main agent
		subs = map[int]int{}
		for j := i + 1; j < len(w.convs) && w.convs[j].file == c.file; j++ {
			subs[int(w.convs[j].sub)] = j
		}
	}
	conv.Turns, _ = w.convTurns(tr, c.sub, subs, true)
	if c.sub >= 0 {
		conv.ID = tr.ID + "::sa:" + tr.Requests[c.sub].AgentID
	}
	if len(conv.Turns) == 0 {
		return Conversation{}, fmt.Errorf("re-read %s: conversation %s has no requests (was the file changed since it was opened?)", w.src.name(int(c.file)), conv.ID)
	}
	return conv, nil
}

// Schedule lists every conversation's first request in time order.
func (w *wekaSet) Schedule() []Timed {
	s := make([]Timed, len(w.convs))
	for c, conv := range w.convs {
		s[c] = Timed{Conv: c, AtMs: conv.ts - w.zero}
	}
	slices.SortStableFunc(s, func(a, b Timed) int { return cmpFloat(a.AtMs, b.AtMs) })
	return s
}

func (w *wekaSet) Sampling() string { return samplingOr(w.o, SamplingSequential) }
func (w *wekaSet) Close() error     { return nil }
func (w *wekaSet) turnCount() int   { return w.turns }

// thinkMs is a call's recorded think time in ms (0 when not recorded).
func thinkMs(r wekaRequest) float64 {
	if r.ThinkTime == nil {
		return 0
	}
	return max(0, *r.ThinkTime*1000)
}

// wekaPeak is the largest in+out tokens of one of a trace's calls, its
// subagents' included: the context the trace needs (--max-context-length).
func wekaPeak(tr wekaTrace) int64 {
	var peak int64
	for _, r := range tr.Requests {
		for _, c := range append([]wekaRequest{r}, r.Inner...) {
			if c.Type != "subagent" {
				peak = max(peak, c.In+c.Out)
			}
		}
	}
	return peak
}
