package endpoint

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// messagesMaxTokens is sent when a request has no max tokens: the Messages
// API requires the field (AIPerf's fallback).
const messagesMaxTokens = 1024

// messagesBody is an Anthropic Messages API body: "messages" without the
// system prompt, which goes in "system" (the API takes only user and
// assistant messages); "max_tokens" always; "stream" only when streaming.
func messagesBody(req *Request) map[string]any {
	m := make(map[string]any, 5+len(req.Extra)+len(req.TurnExtra))
	m["model"] = req.Model
	system, msgs := splitSystem(req)
	if msgs == nil {
		system, m["messages"] = liftSystem(req.RawMessages)
	} else {
		m["messages"] = msgs
	}
	if system != "" {
		m["system"] = system
	}
	m["max_tokens"] = messagesMaxTokens
	if req.MaxTokens > 0 {
		m["max_tokens"] = req.MaxTokens
	}
	if req.Streaming {
		m["stream"] = true
	}
	if len(req.Tools) > 0 {
		m["tools"] = req.Tools
	}
	return m
}

// liftSystem separates the leading system messages of a raw messages array
// from the rest: their texts joined by a blank line (a list content's text
// parts joined by a newline, as vLLM renders them), and the array without
// them. raw is returned as it is when it has no leading system message (or
// is not an array of messages).
func liftSystem(raw json.RawMessage) (string, json.RawMessage) {
	if !bytes.Contains(raw, []byte(`"system"`)) {
		return "", raw // the usual case, not decoded
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return "", raw
	}
	var texts []string
	n := 0
	for ; n < len(elems); n++ {
		var msg struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(elems[n], &msg) != nil || msg.Role != "system" {
			break
		}
		text, ok := systemText(msg.Content)
		if !ok {
			break
		}
		if text != "" {
			texts = append(texts, text)
		}
	}
	if n == 0 {
		return "", raw
	}
	rest, err := json.Marshal(elems[n:])
	if err != nil {
		return "", raw
	}
	return strings.Join(texts, "\n\n"), rest
}

// systemText is a system message's text: its string content, or the text
// of its "text" parts joined by a newline; ok is false for another content.
func systemText(content json.RawMessage) (text string, ok bool) {
	if len(content) == 0 || isNull(content) {
		return "", true
	}
	if json.Unmarshal(content, &text) == nil {
		return text, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return "", false
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), true
}

// messagesUsage is the Messages API's usage object. Its input_tokens are
// only the prompt tokens neither read from nor written to the prompt
// cache; AIPerf's prompt count adds the two back (disjoint accounting).
type messagesUsage struct {
	InputTokens         usageCount `json:"input_tokens"`
	OutputTokens        usageCount `json:"output_tokens"`
	CacheReadTokens     usageCount `json:"cache_read_input_tokens"`
	CacheCreationTokens usageCount `json:"cache_creation_input_tokens"`
}

// merge takes the counts u reports: later events' win.
func (m *messagesUsage) merge(u *messagesUsage) {
	for _, f := range []struct{ dst, src *usageCount }{{&m.InputTokens, &u.InputTokens},
		{&m.OutputTokens, &u.OutputTokens}, {&m.CacheReadTokens, &u.CacheReadTokens},
		{&m.CacheCreationTokens, &u.CacheCreationTokens}} {
		if f.src.Set {
			*f.dst = *f.src
		}
	}
}

// metrics converts the usage, its prompt count the input tokens plus the
// cache's reads and writes.
func (m *messagesUsage) metrics() *metrics.Usage {
	w := wireUsage{PromptTokens: m.InputTokens, CompletionTokens: m.OutputTokens,
		CacheReadInputTokens: m.CacheReadTokens, CacheCreationTokens: m.CacheCreationTokens}
	if w.PromptTokens.Bad == "" {
		for _, c := range []usageCount{m.CacheReadTokens, m.CacheCreationTokens} {
			if n := c.count(); n != nil {
				w.PromptTokens.N += *n
			}
		}
	}
	return w.named(metrics.MessagesNames)
}

// messagesContent is a message's content blocks.
type messagesContent []struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
}

func (c messagesContent) output() (text, reasoning string) {
	var tool string
	for _, b := range c {
		switch b.Type {
		case "text":
			text += b.Text
		case "thinking":
			reasoning += b.Thinking
		case "tool_use":
			tool += b.Name
			if len(b.Input) > 0 && !isNull(b.Input) {
				tool += string(b.Input)
			}
		}
	}
	if text == "" {
		text = tool
	}
	return text, reasoning
}

// messagesEvent is a streamed event, or a whole message.
type messagesEvent struct {
	Type    string          `json:"type"`
	Error   json.RawMessage `json:"error"`
	Content messagesContent `json:"content"`
	Usage   *messagesUsage  `json:"usage"`
	Message *struct {
		Usage *messagesUsage `json:"usage"`
	} `json:"message"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
}

// messagesFormat reads the Anthropic Messages API.
type messagesFormat struct{}

func (messagesFormat) label() string { return "Anthropic Messages" }

func (messagesFormat) stream() streamDecoder { return &messagesStream{} }

func (messagesFormat) whole(b []byte, status int) (piece, string) {
	if e := wholeError(b, status); e != nil {
		return piece{err: e}, ""
	}
	var ev messagesEvent
	if why := decodeObject(b, &ev); why != "" {
		return piece{}, why
	}
	if ev.Type != "message" {
		return piece{}, `the JSON body is not a message ("type": "message")`
	}
	text, reasoning := ev.Content.output()
	if ev.Usage != nil {
		return piece{text: text, reasoning: reasoning, usage: ev.Usage.metrics()}, ""
	}
	return piece{text: text, reasoning: reasoning}, ""
}

// messagesStream reads the events of a streamed message; its usage comes
// in two parts, input tokens in message_start and the output count in
// message_delta.
type messagesStream struct {
	usage messagesUsage
	seen  bool
}

func (s *messagesStream) eofEnds() bool { return false }

func (s *messagesStream) event(name string, data []byte, status int) (piece, eventKind) {
	var ev messagesEvent
	if data[0] != '{' || json.Unmarshal(data, &ev) != nil {
		if name == "error" {
			return piece{err: &metrics.Error{Code: status, Type: ErrTypeStream, Message: bodyMessage(data)}}, kindChunk
		}
		return piece{}, kindMalformed
	}
	typ := ev.Type
	if typ == "" {
		typ = name
	}
	switch typ {
	case "error":
		e := errorField(ev.Error, status)
		if e == nil {
			e = &metrics.Error{Code: status, Type: ErrTypeStream, Message: bodyMessage(data)}
		}
		return piece{err: e}, kindChunk
	case "message_start":
		if ev.Message != nil && ev.Message.Usage != nil {
			s.add(ev.Message.Usage)
		}
		return piece{usage: s.current()}, kindChunk
	case "content_block_delta":
		if ev.Delta == nil {
			return piece{}, kindChunk
		}
		switch ev.Delta.Type {
		case "thinking_delta":
			return piece{reasoning: ev.Delta.Thinking}, kindChunk
		case "input_json_delta":
			return piece{text: ev.Delta.PartialJSON}, kindChunk
		}
		return piece{text: ev.Delta.Text}, kindChunk
	case "message_delta":
		if ev.Usage != nil {
			s.add(ev.Usage)
		}
		return piece{usage: s.current()}, kindChunk
	case "message_stop":
		return piece{end: true}, kindEnd
	case "ping", "content_block_start", "content_block_stop":
		return piece{}, kindSkip
	}
	return piece{}, kindMalformed
}

// add takes the counts a usage event reports: later ones win.
func (s *messagesStream) add(u *messagesUsage) {
	s.seen = true
	s.usage.merge(u)
}

func (s *messagesStream) current() *metrics.Usage {
	if !s.seen {
		return nil
	}
	return s.usage.metrics()
}
