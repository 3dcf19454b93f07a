package dataset

import (
	"encoding/json"
	"math"
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
// file), as AIPerf groups them. A parent must come before its follow-ups
// in the file (a trace sorted by timestamp does).
type chains struct {
	root  map[int64]int64 // chat_id → its session's root
	since map[int64]int   // a parent not seen yet → the first line naming it
}

// join sets a chained row's session, reporting false (and the problem)
// when it follows its own follow-up in the file.
func (c *chains) join(ps *problems, no int, info *rowInfo) bool {
	if c.root == nil {
		c.root, c.since = map[int64]int64{}, map[int64]int{}
	}
	if at, ok := c.since[info.chat]; ok {
		ps.add(no, problemf("chat_id", "request %d is the parent of line %d, which comes before it: list a request before its follow-ups (sort the trace by timestamp)", info.chat, at))
		return false
	}
	root, known := info.chat, false
	if info.parent != noParent && info.parent != info.chat {
		if root, known = c.root[info.parent]; !known {
			root = info.chat
			if _, ok := c.since[info.parent]; !ok {
				c.since[info.parent] = no
			}
		}
	}
	if _, dup := c.root[info.chat]; !dup {
		c.root[info.chat] = root
	}
	id := strconv.FormatInt(root, 10)
	info.session = &id
	return true
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
