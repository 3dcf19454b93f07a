package dataset

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// bailianRecord is a bailian_trace line: AIPerf's BailianTrace model (the
// public Alibaba Bailian usage traces). Type is the request's kind (text,
// search, image, file), not a record type.
type bailianRecord struct {
	ChatID       *int64   `json:"chat_id"`
	ParentChatID *int64   `json:"parent_chat_id"`
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int64   `json:"input_length"`
	OutputLength *int64   `json:"output_length"`
	Type         *string  `json:"type"`
	Turn         *int64   `json:"turn"`
	HashIDs      *[]int64 `json:"hash_ids"`
}

// noParent is the parent_chat_id of a session's first request.
const noParent = -1

// checkBailian validates a bailian_trace line as AIPerf's BailianTrace
// model does: chat_id, timestamp (seconds), input_length and output_length
// required; parent_chat_id (default -1) and turn (default 1) optional;
// hash_ids fit input_length for blockSize tokens per id (0 skips that).
func checkBailian(line []byte, blockSize int) (rowInfo, []problem) {
	r, ps := decodeBailian(line, blockSize)
	if ps != nil {
		return rowInfo{}, ps
	}
	ms := *r.Timestamp * 1000
	info := rowInfo{turns: 1, ts: ms, ts0: ms, first: ms, last: ms, mode: modeSynth,
		context: MessageArrayWithResponses, chained: true, chat: *r.ChatID, parent: noParent, turn: 1}
	if r.ParentChatID != nil {
		info.parent = *r.ParentChatID
	}
	if r.Turn != nil {
		info.turn = *r.Turn
	}
	return info, nil
}

// decodeBailian decodes and checks a bailian_trace line.
func decodeBailian(line []byte, blockSize int) (bailianRecord, []problem) {
	var r bailianRecord
	if ps := decodeLine(line, &r); ps != nil {
		return r, ps
	}
	var ps []problem
	for _, f := range []struct {
		name string
		set  bool
	}{{"chat_id", r.ChatID != nil}, {"timestamp", r.Timestamp != nil}, {"input_length", r.InputLength != nil},
		{"output_length", r.OutputLength != nil}} {
		if !f.set {
			ps = append(ps, problemf(f.name, "required: a Bailian record has chat_id, timestamp (seconds), input_length and output_length"))
		}
	}
	if r.InputLength != nil {
		ps = append(ps, checkInputLength(*r.InputLength, r.HashIDs, blockSize)...)
	}
	ps = append(ps, checkOutputLength(r.OutputLength)...)
	ps = append(ps, checkSeconds("timestamp", r.Timestamp)...)
	if r.Turn != nil && *r.Turn < 1 {
		ps = append(ps, problemf("turn", "expected a turn number of at least 1, got %d", *r.Turn))
	}
	return r, ps
}

// checkSeconds checks a time in seconds: a finite number ≥ 0 whose
// milliseconds are at most MaxTimestampMs.
func checkSeconds(field string, v *float64) []problem {
	switch {
	case v == nil:
	case *v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0):
		return []problem{problemf(field, "expected a number of seconds ≥ 0, got %v", *v)}
	case *v*1000 > MaxTimestampMs:
		return []problem{problemf(field, "expected at most %.0f seconds, got %v", float64(MaxTimestampMs)/1000, *v)}
	}
	return nil
}

// chains resolves Bailian sessions while a file is indexed: a request
// belongs to the session of its root, the request its parent_chat_id
// chain leads back to (one whose parent is -1, itself, or not in the
// file), as AIPerf groups them, whatever the order of the file. A
// follow-up whose parent has not appeared yet starts a session of its own,
// merged into its parent's session when the parent comes (adopt).
type chains struct {
	root    map[int64]int64   // chat_id → its parent's session root, or itself: find follows it
	waiting map[int64][]int64 // a parent not seen yet → the roots of its follow-ups' sessions
}

// find is the root of chat's session.
func (c *chains) find(chat int64) int64 {
	r := chat
	for {
		p, ok := c.root[r]
		if !ok || p == r {
			break
		}
		r = p
	}
	for chat != r { // path compression
		p := c.root[chat]
		c.root[chat] = r
		chat = p
	}
	return r
}

// join sets a chained row's session: its parent's session, or one of its
// own while the parent is not known.
func (c *chains) join(info *rowInfo) {
	if c.root == nil {
		c.root, c.waiting = map[int64]int64{}, map[int64][]int64{}
	}
	root := info.chat
	if info.parent != noParent && info.parent != info.chat {
		if _, known := c.root[info.parent]; known {
			root = c.find(info.parent)
		} else {
			c.waiting[info.parent] = append(c.waiting[info.parent], info.chat)
		}
	}
	if _, dup := c.root[info.chat]; !dup {
		c.root[info.chat] = root
	}
	id := strconv.FormatInt(root, 10)
	info.session = &id
}

// adopt merges the sessions of the follow-ups that came before their
// parent, chat, into chat's session, conversation conv: the merged
// conversation starts at the earlier of their start times, and its rows
// are put in turn order by group (sortTurns).
func (ix *indexer) adopt(chat int64, conv int32) {
	w := ix.chains.waiting[chat]
	if len(w) == 0 {
		return
	}
	delete(ix.chains.waiting, chat)
	d, to := ix.d, ix.convOf(conv)
	for _, orphan := range w {
		st := ix.sessions[ix.key(strconv.FormatInt(orphan, 10))]
		if st == nil {
			continue // its row had a problem
		}
		from := ix.convOf(st.conv)
		if from == to {
			continue
		}
		ix.chains.root[orphan] = ix.chains.find(chat)
		// the one listed first is kept, so that sessions stay in the order
		// of their first rows, as AIPerf's
		from, to = max(from, to), min(from, to)
		for len(ix.alias) <= int(from) {
			ix.alias = append(ix.alias, int32(len(ix.alias)))
		}
		ix.alias[from] = to
		if math.IsNaN(d.ts[to]) || d.ts[from] < d.ts[to] {
			d.ts[to] = d.ts[from]
		}
		d.line[to] = min(d.line[to], d.line[from])
		if ix.convTurns != nil {
			ix.convTurns[to] += ix.convTurns[from]
		}
	}
}

// convOf is the conversation conv was merged into (itself if none).
func (ix *indexer) convOf(conv int32) int32 {
	for int(conv) < len(ix.alias) && ix.alias[conv] != conv {
		conv = ix.alias[conv]
	}
	return conv
}

// unmerge drops the conversations merged into others before group: each
// row goes to its conversation's final one, renumbered in order.
func (ix *indexer) unmerge() {
	if ix.alias == nil {
		return
	}
	d := ix.d
	next := make([]int32, len(d.ts))
	n := int32(0)
	for c := range d.ts {
		if ix.convOf(int32(c)) != int32(c) {
			continue
		}
		next[c] = n
		d.ts[n], d.line[n] = d.ts[c], d.line[c]
		if ix.convTurns != nil {
			ix.convTurns[n] = ix.convTurns[c]
		}
		n++
	}
	for i, c := range ix.conv {
		ix.conv[i] = next[ix.convOf(c)]
	}
	d.ts, d.line = d.ts[:n], d.line[:n]
	if ix.convTurns != nil {
		ix.convTurns = ix.convTurns[:n]
	}
	ix.alias = nil
	ix.merged = true
}

// sortTurns puts the rows of each merged session in turn order (stable),
// as AIPerf sorts a Bailian session by turn, after group.
func (ix *indexer) sortTurns(turns []int32) {
	d := ix.d
	if !ix.merged || d.start == nil {
		return
	}
	for c := range len(d.start) - 1 {
		lo, hi := int(d.start[c]), int(d.start[c+1])
		if slices.IsSorted(turns[lo:hi]) {
			continue
		}
		idx := make([]int, hi-lo)
		for i := range idx {
			idx[i] = lo + i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(turns[a], turns[b]) })
		off, size, sum := make([]int64, len(idx)), make([]uint32, len(idx)), make([]uint32, len(idx))
		for i, r := range idx {
			off[i], size[i], sum[i] = d.off[r], d.n[r], d.sum[r]
		}
		copy(d.off[lo:hi], off)
		copy(d.n[lo:hi], size)
		copy(d.sum[lo:hi], sum)
	}
}

// bailianTurn builds the turn of a bailian row: a prompt of input_length
// tokens from its hash ids, sent on its own (the row is the whole request
// the service received, history included).
func (d *fileDataset) bailianTurn(c *convBuilder, line []byte, row uint64) error {
	var r bailianRecord
	if err := json.Unmarshal(line, &r); err != nil {
		return err
	}
	if c.ID == "" { // the session's first row is its root
		c.ID = strconv.FormatInt(*r.ChatID, 10)
	}
	t := Turn{MaxTokens: int(*r.OutputLength)}
	ms := *r.Timestamp * 1000
	d.setTiming(&t, &ms, nil)
	var ids []int64
	if r.HashIDs != nil {
		ids = *r.HashIDs
	}
	d.hashTurn(&t, ids, int(*r.InputLength), row)
	c.Turns = append(c.Turns, t)
	c.Mode = MessageArrayWithResponses
	return nil
}
