package chattemplate

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Chat is the conversation a request body carries, as AIPerf reads it to
// count ISL through the chat template.
type Chat struct {
	Messages []Message
	// ToolTexts are the texts of the body's tool schemas (each function's
	// name, description and parameters as JSON) and of its function-call
	// items, which the templated count leaves out: AIPerf counts them on
	// top, joined by spaces.
	ToolTexts []string
}

// textParts are the content-part types whose text is a message's.
var textParts = map[string]bool{"text": true, "input_text": true, "output_text": true}

// Messages reads the conversation of a request body: the first "messages"
// or "input" array holding an object with a "role" or a "type" (a chat,
// Responses or Messages API body; an embeddings input of strings is none).
// Each item with a string role is a message whose content is its string
// content or its text parts joined (media parts dropped); an assistant's
// tool_calls pass through. A top-level system prompt, Messages API's
// "system" (a string or text blocks) or Responses' "instructions", comes
// first as a system message. ok is false for a body with no such array
// (completions, embeddings, rankings): its ISL is the bare text's count.
func Messages(body []byte) (chat Chat, ok bool, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return Chat{}, false, fmt.Errorf("read the request body's messages: %w", err)
	}
	for _, field := range []string{"system", "instructions"} {
		if system := text(top[field]); system != "" {
			chat.Messages = append(chat.Messages, Message{Role: "system", Content: system})
		}
	}
	for _, field := range []string{"messages", "input"} {
		items, isItems := itemArray(top[field])
		if !isItems {
			continue
		}
		ok = true
		for _, it := range items {
			chat.add(it)
		}
	}
	if !ok {
		chat.Messages = nil
	}
	chat.tools(top["tools"])
	return chat, ok, nil
}

// item is the part of a chat or Responses item that counts.
type item struct {
	Role      *string         `json:"role"`
	Type      *string         `json:"type"`
	Content   json.RawMessage `json:"content"`
	ToolCalls json.RawMessage `json:"tool_calls"`
	Name      any             `json:"name"`
	Arguments any             `json:"arguments"`
	Output    any             `json:"output"`
}

// itemArray decodes raw as an array of items when it is one and some item
// has a role or a type.
func itemArray(raw json.RawMessage) ([]item, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil, false
	}
	items := make([]item, 0, len(elems))
	found := false
	for _, e := range elems {
		var it item
		if e = bytes.TrimSpace(e); len(e) == 0 || e[0] != '{' || json.Unmarshal(e, &it) != nil {
			continue
		}
		found = found || it.Role != nil || it.Type != nil
		items = append(items, it)
	}
	return items, found
}

func (c *Chat) add(it item) {
	content := text(it.Content)
	if it.Type != nil {
		switch *it.Type {
		case "function_call":
			c.ToolTexts = appendStrings(c.ToolTexts, it.Name, it.Arguments)
		case "function_call_output":
			c.ToolTexts = appendStrings(c.ToolTexts, it.Output)
		}
	}
	if it.Role == nil {
		return
	}
	m := Message{Role: *it.Role, Content: content}
	if calls := decode(it.ToolCalls); calls != nil {
		if list, isList := calls.([]any); isList && len(list) > 0 {
			m.ToolCalls = list
		}
	}
	c.Messages = append(c.Messages, m)
}

// text is a content's text: a string, or its text parts joined.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string
		Text *string
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b []byte
	for _, p := range parts {
		if textParts[p.Type] && p.Text != nil {
			b = append(b, *p.Text...)
		}
	}
	return string(b)
}

// tools adds the texts of the tool schemas: name and description of each
// function (or of the tool itself, Responses' flat shape) and its
// parameters as compact JSON.
func (c *Chat) tools(raw json.RawMessage) {
	var tools []map[string]json.RawMessage
	if json.Unmarshal(raw, &tools) != nil {
		return
	}
	for _, tool := range tools {
		var fn map[string]json.RawMessage
		_ = json.Unmarshal(tool["function"], &fn)
		for _, src := range []map[string]json.RawMessage{fn, tool} {
			c.ToolTexts = appendStrings(c.ToolTexts, decode(src["name"]), decode(src["description"]))
			if params := bytes.TrimSpace(src["parameters"]); len(params) > 0 && params[0] == '{' {
				var b bytes.Buffer
				if json.Compact(&b, params) == nil {
					c.ToolTexts = append(c.ToolTexts, b.String())
				}
			}
		}
	}
}

// decode decodes raw JSON, numbers kept as json.Number (nil when absent or
// invalid).
func decode(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	return v
}

// appendStrings appends each value that is a non-empty string.
func appendStrings(out []string, values ...any) []string {
	for _, v := range values {
		if s, ok := v.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}
