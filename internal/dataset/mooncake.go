package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Input modes of a mooncake row; a session's rows must agree on theirs.
const (
	modeSynth   uint8 = 1 << iota // input_length or text_input: a prompt the tool writes
	modeHistory                   // messages, message_mode history (the default)
	modeDelta                     // messages, message_mode delta
	modePayload                   // payload
)

// maxInputLength bounds a synthesised prompt (and a reply's length), so that a stray number cannot
// make the tool write gigabytes of text.
const maxInputLength = 1 << 24

// contextModes are the context_mode values a mooncake row may declare.
var contextModes = []string{DeltasWithoutResponses, MessageArrayWithResponses}

// checkMooncake validates a mooncake_trace line as AIPerf's MooncakeTrace
// model does, and checks that hash_ids fit input_length for blockSize (0
// skips that check, as format detection does).
func checkMooncake(line []byte, blockSize int) (rowInfo, []problem) {
	info, _, ps := decodeMooncake(line, blockSize)
	return info, ps
}

// decodeMooncake is checkMooncake returning the decoded record too.
func decodeMooncake(line []byte, blockSize int) (rowInfo, mooncakeRecord, []problem) {
	var r mooncakeRecord
	if ps := decodeLine(line, &r); ps != nil {
		return rowInfo{}, r, ps
	}
	ps := checkType(r.Type, TypeMooncakeTrace)
	modes := 0
	for _, set := range []bool{r.InputLength != nil, r.TextInput != nil, isSet(r.Messages), isSet(r.Payload)} {
		if set {
			modes++
		}
	}
	switch {
	case modes == 0:
		ps = append(ps, problemf("", "exactly one of 'input_length', 'text_input', 'messages', or 'payload' must be provided"))
	case modes > 1:
		ps = append(ps, problemf("", "'input_length', 'text_input', 'messages', and 'payload' are mutually exclusive: use only one of them"))
	}
	if r.HashIDs != nil && r.InputLength == nil {
		ps = append(ps, problemf("hash_ids", "'hash_ids' is only allowed when 'input_length' is provided, not when 'text_input', 'messages', or 'payload' are provided"))
	}
	if r.InputLength != nil {
		ps = append(ps, checkInputLength(*r.InputLength, r.HashIDs, blockSize)...)
	}
	if isSet(r.Payload) {
		var p map[string]json.RawMessage
		if err := json.Unmarshal(r.Payload, &p); err != nil || len(p) == 0 {
			ps = append(ps, problemf("payload", "'payload' must be a non-empty object"))
		}
	}
	if isSet(r.Tools) {
		var tools []map[string]json.RawMessage
		switch err := json.Unmarshal(r.Tools, &tools); {
		case !isSet(r.Messages):
			ps = append(ps, problemf("tools", "'tools' is only allowed when 'messages' is provided"))
		case err != nil:
			ps = append(ps, problemf("tools", "expected a list of tool objects, got %s", jsonKindOf(r.Tools)))
		case len(tools) == 0:
			ps = append(ps, problemf("tools", "'tools' must be a non-empty list"))
		}
	}
	if isSet(r.Messages) {
		ps = append(ps, checkMessages("messages", r.Messages)...)
	}
	delta := r.MessageMode != nil && *r.MessageMode == "delta"
	switch {
	case r.MessageMode != nil && *r.MessageMode != "history" && !delta:
		ps = append(ps, problemf("message_mode", `expected "history" or "delta", got %q`, *r.MessageMode))
	case delta && !isSet(r.Messages):
		ps = append(ps, problemf("message_mode", "message_mode 'delta' is only supported with 'messages'; 'payload', 'text_input', and 'input_length' entries cannot be delta turns"))
	case delta && bytes.Contains(r.Extra, []byte(`"messages"`)) && extraHasMessages(r.Extra):
		ps = append(ps, problemf("extra", "message_mode 'delta': 'extra' must not contain a 'messages' key; it would overwrite the assembled conversation history"))
	}
	if r.ContextMode != nil && !slices.Contains(contextModes, *r.ContextMode) {
		ps = append(ps, problemf("context_mode", "expected one of %q, got %q", contextModes, *r.ContextMode))
	}
	ps = append(ps, checkOutputLength(r.OutputLength)...)
	ps = append(ps, checkTime("timestamp", r.Timestamp)...)
	ps = append(ps, checkDelay("delay", r.Delay)...)
	ps = append(ps, checkObject("extra", r.Extra)...)
	if !delta || !extraHasMessages(r.Extra) { // else said above, in AIPerf's words
		ps = append(ps, checkExtraPrompt("extra", r.Extra)...)
	}
	if len(ps) > 0 {
		return rowInfo{}, r, ps
	}
	info := rowInfo{session: r.SessionID, turns: 1, ts: timeOrNaN(r.Timestamp)}
	info.ts0, info.first, info.last = info.ts, info.ts, info.ts
	if r.Delay != nil {
		info.delay = *r.Delay
	}
	switch {
	case isSet(r.Payload):
		info.mode = modePayload
	case delta:
		info.mode = modeDelta
	case isSet(r.Messages):
		info.mode = modeHistory
	default:
		info.mode = modeSynth
	}
	if r.ContextMode != nil {
		info.context = *r.ContextMode
	}
	if want := info.wantContext(); info.context != "" && info.context != want {
		return rowInfo{}, r, []problem{problemf("context_mode", "%s rows need context_mode %q, got %q", modeName(info.mode), want, info.context)}
	}
	return info, r, nil
}

// checkInputLength checks a trace row's input_length, and that its hash_ids
// (nil: none) fit it for blockSize tokens per hash id (0 skips that check,
// as format detection does).
func checkInputLength(n int64, hashIDs *[]int64, blockSize int) []problem {
	if n < 1 || n > maxInputLength {
		return []problem{problemf("input_length", "expected an integer from 1 to %d, got %d", maxInputLength, n)}
	}
	if hashIDs != nil && blockSize > 0 {
		if msg := checkHashIDs(n, *hashIDs, blockSize); msg != "" {
			return []problem{problemf("hash_ids", "%s", msg)}
		}
	}
	return nil
}

// checkOutputLength checks a trace row's output_length (nil: absent).
func checkOutputLength(n *int64) []problem {
	if n != nil && (*n < 1 || *n > maxInputLength) {
		return []problem{problemf("output_length", "expected an integer from 1 to %d, got %d", maxInputLength, *n)}
	}
	return nil
}

func extraHasMessages(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	_, ok := m["messages"]
	return ok
}

func timeOrNaN(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// wantContext is the context mode a row's input mode implies ("" when any).
func (r rowInfo) wantContext() string {
	switch r.mode {
	case modeHistory, modePayload:
		return MessageArrayWithResponses
	case modeDelta:
		return DeltasWithoutResponses
	}
	return ""
}

func modeName(mode uint8) string {
	switch mode {
	case modeHistory:
		return "messages"
	case modeDelta:
		return "delta messages"
	case modePayload:
		return "payload"
	}
	return "input_length/text_input"
}

// checkSessionModes says what is wrong with a session whose rows use the
// input modes in modes (a bit set), or "".
func checkSessionModes(modes uint8) string {
	raw := modes & (modeHistory | modeDelta | modePayload)
	switch {
	case raw != 0 && modes&modeSynth != 0:
		return "mixed Mooncake sessions with both raw `messages`/`payload` and synthesized prompts are unsupported"
	case raw&modePayload != 0 && raw != modePayload:
		return "a session mixes `messages` and `payload` rows; each session must use exactly one mode"
	case raw == modeHistory|modeDelta:
		return "a session mixes message_mode 'history' and 'delta' rows; use one message_mode for the whole session"
	}
	return ""
}

// mooncakeTurn builds the turn of a mooncake row; row keys the row's fresh
// text and drawn output length.
func (d *fileDataset) mooncakeTurn(c *convBuilder, line []byte, row uint64) error {
	var r mooncakeRecord
	if err := json.Unmarshal(line, &r); err != nil {
		return err
	}
	if c.ID == "" && r.SessionID != nil {
		c.ID = *r.SessionID
	}
	t := Turn{MaxTokens: outputTokens(d.o, r.OutputLength, row)}
	if isSet(r.Payload) && r.OutputLength == nil {
		t.MaxTokens = 0 // the body is sent as it is
	}
	d.setTiming(&t, r.Timestamp, r.Delay)
	switch {
	case r.InputLength != nil:
		var ids []int64
		if r.HashIDs != nil {
			ids = *r.HashIDs
		}
		d.hashTurn(&t, ids, int(*r.InputLength), row)
	case r.TextInput != nil:
		t.Text, t.InputTokens = *r.TextInput, c.tok.Count(*r.TextInput)
	case isSet(r.Messages):
		t.Messages = json.RawMessage(bytes.Clone(r.Messages))
		t.InputTokens = messagesTokens(c.tok, r.Messages)
		if isSet(r.Tools) {
			t.Tools = json.RawMessage(bytes.Clone(r.Tools))
		}
		if r.MessageMode != nil && *r.MessageMode == "delta" {
			c.Mode = DeltasWithoutResponses
		} else {
			c.Mode = MessageArrayWithResponses
		}
	default:
		t.Payload = json.RawMessage(bytes.Clone(r.Payload))
		t.InputTokens = payloadTokens(c.tok, r.Payload)
		c.Mode = MessageArrayWithResponses
	}
	if r.ContextMode != nil {
		c.Mode = *r.ContextMode
	}
	extra, err := decodeExtra(r.Extra)
	if err != nil {
		return fmt.Errorf("extra: %w", err)
	}
	t.Extra = extra
	c.Turns = append(c.Turns, t)
	return nil
}

// hashTurn sets t's text: inputLength tokens whose blocks the hash ids
// give (a trace row's synthesised prompt); row keys its fresh text.
func (d *fileDataset) hashTurn(t *Turn, hashIDs []int64, inputLength int, row uint64) {
	t.Text = d.words.hashPrompt(d.o.Seed, hashIDs, inputLength, d.block, row)
	t.InputTokens = inputLength
}
