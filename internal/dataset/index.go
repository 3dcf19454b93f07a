package dataset

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"time"
)

// rowInfo is what checking a line tells the index about it.
type rowInfo struct {
	session *string
	turns   int
	// ts is when the conversation starts if this row starts it; ts0 is its
	// first turn's timestamp; first and last are the earliest and latest
	// timestamps of its turns in order. NaN means none.
	ts, ts0, first, last float64
	// lead: the first turn is a system turn a multi_turn conversation
	// hoists into its system message.
	lead bool
	// mode is a mooncake row's input mode and context its context_mode.
	mode    uint8
	context string
	// trace is the decoded mooncake row (ScanTrace only).
	trace TraceRow
	// chained: a bailian row, whose session is the root of its chat_id's
	// parent_chat_id chain (resolved in file order), at turn turn.
	chained      bool
	chat, parent int64
	turn         int64
	// skip: the line is not a record (a CSV file's header).
	skip bool
	// unordered: the row's session may list its rows in any order; they
	// are sorted by timestamp (a Baseten trace's).
	unordered bool
	// delay is the longest delay of the row's turns, in ms (0: none).
	delay float64
}

// sessionState is what indexing remembers of a session while it reads.
type sessionState struct {
	conv     int32
	line     uint32
	last     float64 // latest timestamp so far (NaN: none)
	lastLine uint32
	modes    uint8
	context  string
	noCtx    bool // some row has no context_mode
	pending  bool // the start time comes from the session's next row
	reported bool
	turn     int64 // latest turn number (bailian)
}

// indexer builds a fileDataset's index.
type indexer struct {
	d        *fileDataset
	ps       problems
	seed     [2]maphash.Seed
	sessions map[[2]uint64]*sessionState
	conv     []int32 // per row, in file order
	lines    int
	skipped  int
	// latest is the latest timestamp of the rows kept and latestLine its
	// line (0: none), checked against the horizon once the zero is known.
	latest     float64
	latestLine int
	// delay is the longest delay of the rows kept and delayLine its line
	// (0: none), checked against the horizon in replay time.
	delay     float64
	delayLine int
	chains    chains // bailian sessions
	// convTurns counts each conversation's turns while sessions are to be
	// sampled; times are the rows' timestamps while idle gaps are to be
	// capped (replay.go).
	convTurns []int32
	times     []float64
	// rowTurns are a bailian file's turn numbers, per row in file order;
	// alias maps a session merged into its parent's to that one, and
	// merged says some were (bailian.go).
	rowTurns []int32
	alias    []int32
	merged   bool
	// rowTS, when not nil, is each kept row's timestamp, for sorting the
	// rows of unordered sessions.
	rowTS []float64
	// cut are the sessions whose rows an offset dropped before any was
	// kept: a row of theirs timed by a delay would be their first turn,
	// with nothing to be timed from, and goes too.
	cut map[[2]uint64]bool
}

// indexFile reads d.path, checking every line with check, and builds d's
// index. It reports every problem found, up to maxProblems.
func indexFile(ctx context.Context, d *fileDataset, check func([]byte) (rowInfo, []problem)) error {
	ix := newIndexer(d)
	if err := checkLines(ctx, d.f, check, ix.add); err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	return ix.finish()
}

// newIndexer starts the index of d.
func newIndexer(d *fileDataset) *indexer {
	ix := &indexer{d: d, ps: problems{path: d.path}, seed: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		sessions: map[[2]uint64]*sessionState{}}
	if d.o.Replay.sampling() {
		ix.convTurns = []int32{}
	}
	return ix
}

// finish groups the rows added and builds the schedule, once every row
// was added, or reports the problems found.
func (ix *indexer) finish() error {
	d := ix.d
	if !ix.ps.empty() { // the conversations that cannot start too, in line order, as ScanTrace lists them
		ix.unstarted()
		ix.ps.sortByLine()
		return ix.ps.err()
	}
	switch {
	case ix.lines == 0:
		return &LineError{Path: d.path, Msg: "no records: the file is empty or holds only blank lines"}
	case len(d.off) == 0:
		msg := fmt.Sprintf("no records left: all %d rows have timestamps outside the fixed schedule window %s", ix.skipped, offsetWindow(d.o))
		if d.o.MaxISL > 0 && d.kind == TypeBasetenTrace {
			msg += fmt.Sprintf(" or more than %d input tokens (--synthesis-max-isl)", d.o.MaxISL)
		}
		return &LineError{Path: d.path, Msg: msg}
	}
	ix.sessions = nil
	ix.group()
	ix.sample()
	ix.capIdleGaps()
	return ix.schedule()
}

func offsetWindow(o Options) string {
	lo, hi := "-∞", "+∞"
	if o.StartOffsetMs != nil {
		lo = fmt.Sprint(*o.StartOffsetMs)
	}
	if o.EndOffsetMs != nil {
		hi = fmt.Sprint(*o.EndOffsetMs)
	}
	return fmt.Sprintf("[%s, %s] ms", lo, hi)
}

// add indexes one checked line.
func (ix *indexer) add(line []byte, no int, off int64, info rowInfo, ps []problem) {
	if info.skip {
		return
	}
	ix.lines++
	d := ix.d
	if no > math.MaxUint32 || len(d.ts) >= math.MaxInt32 {
		ix.ps.add(no, problemf("", "the file has too many lines"))
		return
	}
	if ps != nil {
		ix.ps.addAll(no, ps)
		return
	}
	if info.mode == modeDelta && (d.o.StartOffsetMs != nil || d.o.EndOffsetMs != nil) {
		ix.ps.add(no, problemf("message_mode", "delta rows cannot be replayed with fixed schedule start/end offsets: dropping rows would break the conversation's history"))
		return
	}
	if ix.offsetDrops(info) {
		ix.skipped++
		return
	}
	if d.o.Replay.Strict { // every row its own conversation
		info.session, info.chained = nil, false
	}
	if info.chained {
		ix.chains.join(&info)
	}
	var conv int32
	if info.session == nil {
		conv = ix.newConv(no, info)
	} else {
		var ok bool
		if conv, ok = ix.joinSession(no, info); !ok {
			return
		}
	}
	if !math.IsNaN(info.last) && (ix.latestLine == 0 || info.last > ix.latest) {
		ix.latest, ix.latestLine = info.last, no
	}
	if info.delay > ix.delay {
		ix.delay, ix.delayLine = info.delay, no
	}
	if info.chained {
		ix.rowTurns = append(ix.rowTurns, int32(min(info.turn, math.MaxInt32)))
		ix.adopt(info.chat, conv)
	}
	ix.addTurns(conv, info.turns)
	ix.noteTimes(info)
	d.off = append(d.off, off)
	d.n = append(d.n, uint32(len(line)))
	if d.baseten == nil { // a Parquet row is read back by its number
		d.sum = append(d.sum, rowSum(line))
	}
	ix.conv = append(ix.conv, conv)
	if ix.rowTS != nil {
		ix.rowTS = append(ix.rowTS, info.first)
	}
}

// offsetDrops reports whether the start and end offsets drop a row: its
// timestamp is outside their window (AIPerf's rule: rows are dropped one
// by one, and a row without a timestamp is kept), or it has none and would
// be the first turn of a session whose timed rows they all dropped so far
// (a delay after a turn that is not replayed, and no turn before it).
func (ix *indexer) offsetDrops(info rowInfo) bool {
	if info.session == nil {
		return outside(ix.d.o, info.first)
	}
	key := ix.key(*info.session)
	switch {
	case outside(ix.d.o, info.first):
		if ix.sessions[key] == nil {
			if ix.cut == nil {
				ix.cut = map[[2]uint64]bool{}
			}
			ix.cut[key] = true
		}
		return true
	case math.IsNaN(info.first) && ix.cut[key] && ix.sessions[key] == nil:
		return true
	}
	delete(ix.cut, key)
	return false
}

// outside reports whether timestamp ts falls outside the offsets' window.
func outside(o Options, ts float64) bool {
	return !math.IsNaN(ts) && (o.StartOffsetMs != nil && ts < *o.StartOffsetMs || o.EndOffsetMs != nil && ts > *o.EndOffsetMs)
}

func (ix *indexer) newConv(no int, info rowInfo) int32 {
	d := ix.d
	d.line = append(d.line, uint32(no))
	d.ts = append(d.ts, info.ts)
	conv := int32(len(d.ts) - 1)
	if ix.convTurns != nil {
		ix.convTurns = append(ix.convTurns, 0)
	}
	if info.lead && info.turns > 1 {
		ix.addTurns(conv, -1) // hoisted into the system message
	}
	return conv
}

// joinSession adds a row with a session_id to its conversation, checking
// that the session's timestamps do not go backwards and, for traces, that
// its rows agree on their input and context modes. It reports false for a
// row with a problem.
func (ix *indexer) joinSession(no int, info rowInfo) (int32, bool) {
	id := *info.session
	key := ix.key(id)
	st := ix.sessions[key]
	if st == nil {
		st = &sessionState{conv: ix.newConv(no, info), line: uint32(no), last: math.NaN(), context: info.context,
			pending: info.lead && info.turns == 1}
		ix.sessions[key] = st
	} else if st.pending {
		ix.d.ts[st.conv], st.pending = info.ts0, false
		ix.addTurns(st.conv, -1)
	}
	if info.unordered {
		ix.d.ts[st.conv] = min(ix.d.ts[st.conv], info.ts)
		return st.conv, true
	}
	where := sessionAt(id, int(st.line))
	if !math.IsNaN(info.first) && info.first < st.last {
		ix.ps.add(no, backwards(info.first, where, st.last, int(st.lastLine)))
		return 0, false
	}
	if info.turn < st.turn {
		ix.ps.add(no, problemf("turn", "turn %d comes after turn %d of %s: list a session's turns in order (sort the trace by timestamp)", info.turn, st.turn, where))
		return 0, false
	}
	st.turn = info.turn
	if !math.IsNaN(info.last) {
		st.last, st.lastLine = info.last, uint32(no)
	}
	st.modes |= info.mode
	if info.context == "" {
		st.noCtx = true
	}
	msg := checkSessionModes(st.modes)
	if msg == "" && (info.context != st.context || st.noCtx && st.context != "") {
		msg = "context_mode must be identical and present on every row of a session"
	}
	if msg != "" {
		if !st.reported {
			ix.ps.add(no, problemf("session_id", "%s: %s", where, msg))
		}
		st.reported = true
		return 0, false
	}
	return st.conv, true
}

// key is session id's key in ix.sessions.
func (ix *indexer) key(id string) [2]uint64 {
	return [2]uint64{maphash.String(ix.seed[0], id), maphash.String(ix.seed[1], id)}
}

// backwards is the problem of a row at timestamp ts, earlier than the
// latest timestamp so far of where, last on line lastLine.
func backwards(ts float64, where string, last float64, lastLine int) problem {
	return problemf("timestamp", "timestamp %v goes backwards: %s was at %v on line %d", ts, where, last, lastLine)
}

// group orders the rows by conversation (a counting sort on ix.conv),
// keeping file order within each.
func (ix *indexer) group() {
	ix.unmerge()
	d := ix.d
	n := len(d.ts)
	// exact-size copies: what append grew beyond the rows is freed
	d.off, d.n, d.line, d.ts, d.sum = slices.Clone(d.off), slices.Clone(d.n), slices.Clone(d.line), slices.Clone(d.ts), slices.Clone(d.sum)
	if len(ix.conv) == n { // one row per conversation, already in order
		ix.conv, ix.rowTS = nil, nil
		return
	}
	d.start = make([]uint32, n+1)
	for _, c := range ix.conv {
		d.start[c+1]++
	}
	for c := range n {
		d.start[c+1] += d.start[c]
	}
	next := slices.Clone(d.start[:n])
	off, size, sum := make([]int64, len(d.off)), make([]uint32, len(d.n)), slices.Clone(d.sum)
	var turns []int32
	if ix.merged {
		turns = make([]int32, len(ix.rowTurns))
	}
	var ts []float64
	if ix.rowTS != nil {
		ts = make([]float64, len(ix.rowTS))
	}
	for i, c := range ix.conv {
		j := next[c]
		next[c]++
		off[j], size[j] = d.off[i], d.n[i]
		if sum != nil {
			sum[j] = d.sum[i]
		}
		if turns != nil {
			turns[j] = ix.rowTurns[i]
		}
		if ts != nil {
			ts[j] = ix.rowTS[i]
		}
	}
	d.off, d.n, d.sum, ix.conv, ix.rowTurns, ix.rowTS = off, size, sum, nil, nil, nil
	ix.sortTurns(turns)
	if ts != nil {
		d.sortSessions(ts)
	}
}

// schedule sets the schedule's zero and, when every conversation starts at
// a timestamp, the schedule. A fixed schedule needs every start time.
func (ix *indexer) schedule() error {
	d := ix.d
	missing, low := 0, math.Inf(1)
	for _, ts := range d.ts {
		if math.IsNaN(ts) {
			missing++
			continue
		}
		low = min(low, ts)
	}
	ix.unstarted()
	if d.o.FixedSchedule && missing == len(d.ts) {
		return &LineError{Path: d.path, Msg: "no conversations with valid first-turn timestamps found: a fixed schedule needs a timestamp on every conversation's first turn"}
	}
	if err := ix.ps.err(); err != nil {
		return err
	}
	zero := "0 (timestamps count from the start of the run)"
	switch {
	case d.o.AutoOffset && missing < len(d.ts):
		d.zero = low
		zero = fmt.Sprintf("%v, the first timestamp (--fixed-schedule-auto-offset)", low)
	case d.o.StartOffsetMs != nil:
		d.zero = *d.o.StartOffsetMs
		zero = fmt.Sprintf("%v (--fixed-schedule-start-offset)", d.zero)
	}
	if ix.latestLine > 0 {
		if p, late := ix.horizon(zero); late {
			ix.ps.add(ix.latestLine, p)
			return ix.ps.err()
		}
	}
	if p, late := ix.delayHorizon(); late {
		ix.ps.add(ix.delayLine, p)
		return ix.ps.err()
	}
	d.timed = missing == 0
	return nil
}

// horizon checks the latest timestamp against the year a replay may last,
// in replay time: after the idle-gap cap (already applied to it) and
// divided by --replay-speedup, as the run schedules it. zero says what
// the schedule's zero is.
func (ix *indexer) horizon(zero string) (problem, bool) {
	d := ix.d
	recorded := ix.latest - d.zero
	speed := d.o.Replay.speedup()
	after := recorded / speed
	if after <= MaxScheduleMs {
		return problem{}, false
	}
	msg := fmt.Sprintf("timestamp %v is %s after the schedule's zero, %s", ix.latest, days(recorded), zero)
	if speed != 1 {
		msg += fmt.Sprintf(", and --replay-speedup %g makes that %s of replay", speed, days(after))
	}
	msg += ": beyond the year a replay may last"
	switch {
	case recorded <= MaxScheduleMs: // the speed-up's doing
		msg += fmt.Sprintf(": raise --replay-speedup to at least %.3g", ceil3(recorded/MaxScheduleMs))
	case !d.o.AutoOffset && d.o.StartOffsetMs == nil:
		msg += " (timestamps are milliseconds); timestamps that count from an epoch need --fixed-schedule-auto-offset"
	default:
		msg += " (timestamps are milliseconds)"
	}
	return problemf("timestamp", "%s", msg), true
}

// delayHorizon checks the longest delay against the year a replay may
// last, in replay time: divided by --replay-speedup and then capped, as
// timing sets it (a delay is at most a day, so only a slow-down can).
func (ix *indexer) delayHorizon() (problem, bool) {
	o := ix.d.o
	after := ix.delay / o.Replay.speedup()
	switch {
	case o.Replay.TraceIdleGapCapMs != nil:
		after = min(after, *o.Replay.TraceIdleGapCapMs)
	case o.DelayCapMs != nil:
		after = min(after, *o.DelayCapMs)
	}
	if after <= MaxScheduleMs || o.IgnoreDelays && !o.FixedSchedule {
		return problem{}, false
	}
	return problemf("delay", "delay %v ms and --replay-speedup %g make a wait of %s: beyond the year a replay may last: "+
		"raise --replay-speedup to at least %.3g (or cap the delays with --inter-turn-delay-cap-seconds)",
		ix.delay, o.Replay.speedup(), days(after), ceil3(ix.delay/MaxScheduleMs)), true
}

// ceil3 is x > 0 rounded up to 3 significant digits.
func ceil3(x float64) float64 {
	unit := math.Pow(10, math.Floor(math.Log10(x))-2)
	return math.Ceil(x/unit) * unit
}

// unstarted reports, on a fixed schedule, each conversation whose first
// turn has no timestamp, at its first line.
func (ix *indexer) unstarted() {
	d := ix.d
	if !d.o.FixedSchedule {
		return
	}
	for c, ts := range d.ts {
		if math.IsNaN(ts) {
			ix.ps.add(int(d.line[c]), noStartTime())
		}
	}
}

// days says how long ms milliseconds are: as a duration under two days,
// else in days or years.
func days(ms float64) string {
	if ms < 2*MaxDelayMs {
		return time.Duration(ms * float64(time.Millisecond)).Round(time.Millisecond).String()
	}
	if d := ms / MaxDelayMs; d < 2*365 {
		return fmt.Sprintf("%.0f days", d)
	}
	return fmt.Sprintf("%.0f years", ms/MaxScheduleMs)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
