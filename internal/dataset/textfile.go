package dataset

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// checkSingleTurn validates a single_turn line (AIPerf's SingleTurn).
func checkSingleTurn(line []byte, fm *fileMedia) (rowInfo, []problem) {
	var r turnRecord
	if ps := decodeLine(line, &r); ps != nil {
		return rowInfo{}, ps
	}
	ps := append(checkType(r.Type, TypeSingleTurn), r.check("", false, fm)...)
	if len(ps) > 0 {
		return rowInfo{}, ps
	}
	ts := timeOrNaN(r.Timestamp)
	info := rowInfo{session: r.SessionID, turns: 1, ts: ts, ts0: ts, first: ts, last: ts}
	if r.Delay != nil {
		info.delay = *r.Delay
	}
	return info, nil
}

// checkMultiTurn validates a multi_turn line (AIPerf's MultiTurn): a
// conversation whose turns follow the single_turn schema and whose
// timestamps do not go backwards.
func checkMultiTurn(line []byte, fm *fileMedia) (rowInfo, []problem) {
	var r multiTurnRecord
	if ps := decodeLine(line, &r); ps != nil {
		return rowInfo{}, ps
	}
	ps := checkType(r.Type, TypeMultiTurn)
	if len(r.Turns) == 0 {
		ps = append(ps, problemf("turns", "at least one turn must be provided"))
	}
	info := rowInfo{session: r.SessionID, turns: len(r.Turns), ts: math.NaN(), first: math.NaN(), last: math.NaN()}
	lastAt := -1
	for i := range r.Turns {
		t := &r.Turns[i]
		ps = append(ps, t.check(fmt.Sprintf("turns[%d].", i), false, fm)...)
		if t.Delay != nil && *t.Delay > info.delay {
			info.delay = *t.Delay
		}
		if t.Timestamp == nil {
			continue
		}
		ts := *t.Timestamp
		if lastAt >= 0 && ts < info.last {
			ps = append(ps, problemf(fmt.Sprintf("turns[%d].timestamp", i), "timestamp %v goes backwards: turns[%d] is at %v", ts, lastAt, info.last))
		}
		if math.IsNaN(info.first) {
			info.first = ts
		}
		info.last, lastAt = ts, i
	}
	if len(ps) > 0 {
		return rowInfo{}, ps
	}
	info.lead, info.ts0 = r.Turns[0].hoistable(), timeOrNaN(r.Turns[0].Timestamp)
	switch {
	case !info.lead:
		info.ts = timeOrNaN(r.Turns[0].Timestamp)
	case len(r.Turns) > 1:
		info.ts = timeOrNaN(r.Turns[1].Timestamp)
	}
	return info, nil
}

// textTurn builds the turn of a single_turn line or multi_turn turn. Several
// texts are joined by a newline into one message.
func (d *fileDataset) textTurn(c *convBuilder, r *turnRecord, row uint64) (Turn, error) {
	texts, ps := r.texts("")
	if len(ps) > 0 {
		return Turn{}, fmt.Errorf("%s", ps[0].Msg)
	}
	text := strings.Join(texts, "\n")
	t := Turn{Text: text, InputTokens: c.tok.Count(text), MaxTokens: outputTokens(d.o, r.OutputLength, row)}
	refs, _ := r.mediaRefs("", false)
	var err error
	if t.Media, err = d.media.list(refs); err != nil {
		return Turn{}, err
	}
	if r.Role != nil {
		t.Role = *r.Role
	}
	d.setTiming(&t, r.Timestamp, r.Delay)
	extra, err := decodeExtra(r.Extra)
	if err != nil {
		return Turn{}, fmt.Errorf("extra: %w", err)
	}
	t.Extra = extra
	return t, nil
}

// singleTurn appends the turn of a single_turn line to c.
func (d *fileDataset) singleTurn(c *convBuilder, line []byte, row uint64) error {
	var r turnRecord
	if err := json.Unmarshal(line, &r); err != nil {
		return err
	}
	if c.ID == "" && r.SessionID != nil {
		c.ID = *r.SessionID
	}
	t, err := d.textTurn(c, &r, row)
	if err != nil {
		return err
	}
	if d.o.UUIDAndStrip {
		if c.seen == nil {
			c.seen = map[string]bool{}
		}
		stripSeen(t.Media, c.seen)
	}
	c.Turns = append(c.Turns, t)
	return nil
}

// multiTurn appends the turns of a multi_turn line to c. The row key of
// turn i is row+i: rows are byte offsets, and a line holds more bytes than
// turns. It notes whether the conversation's first turn may be hoisted.
func (d *fileDataset) multiTurn(c *convBuilder, line []byte, row uint64) error {
	var r multiTurnRecord
	if err := json.Unmarshal(line, &r); err != nil {
		return err
	}
	if len(c.Turns) == 0 && len(r.Turns) > 0 {
		c.lead = r.Turns[0].hoistable()
	}
	if c.ID == "" && r.SessionID != nil {
		c.ID = *r.SessionID
	}
	for i := range r.Turns {
		t, err := d.textTurn(c, &r.Turns[i], row+uint64(i))
		if err != nil {
			return fmt.Errorf("turns[%d]: %w", i, err)
		}
		c.Turns = append(c.Turns, t)
	}
	return nil
}

// hoistSystem makes a leading system turn of a multi_turn conversation its
// system message, as AIPerf does, unless it is the only turn.
func (c *convBuilder) hoistSystem() {
	if c.lead && len(c.Turns) > 1 {
		c.System = c.Turns[0].Text
		c.Turns = c.Turns[1:]
	}
}
