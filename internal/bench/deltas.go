package bench

import (
	"bytes"
	"encoding/json"

	"github.com/aiperf-go/aiperf/internal/dataset"
)

// deltaHistory is a session's conversation so far when its trace rows
// carry message deltas (a mooncake session with "message_mode": "delta",
// AIPerf's deltas_without_responses over recorded messages): every row's
// messages, each followed by the server's live reply, and the tools the
// latest row declared.
type deltaHistory struct {
	msgs  []json.RawMessage
	tools json.RawMessage
}

// threadsDeltas reports whether the turns of c that carry messages are
// deltas of one conversation, to be threaded with the live replies (a DAG
// conversation's even with one turn: its forks inherit them).
func threadsDeltas(c *dataset.Conversation) bool {
	return c.Mode == dataset.DeltasWithoutResponses && (len(c.Turns) > 1 || c.DAG)
}

// add appends a turn's messages (a JSON array, checked when the dataset was
// read) and returns the whole conversation to send and the tools in force.
func (h *deltaHistory) add(t *dataset.Turn) (json.RawMessage, json.RawMessage) {
	var msgs []json.RawMessage
	_ = json.Unmarshal(t.Messages, &msgs)
	h.msgs = append(h.msgs, msgs...)
	if len(t.Tools) > 0 {
		h.tools = t.Tools
	}
	return h.encode(), h.tools
}

// reply appends the server's live reply as an assistant message.
func (h *deltaHistory) reply(text string) {
	b, _ := json.Marshal(struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}{"assistant", text})
	h.msgs = append(h.msgs, b)
}

// encode is the messages as one JSON array.
func (h *deltaHistory) encode() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, m := range h.msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m)
	}
	b.WriteByte(']')
	return b.Bytes()
}
