package mock

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// The token-generating APIs besides OpenAI's: the OpenAI Responses API,
// Anthropic Messages and Hugging Face TGI. Each reads its request into
// OpenAI terms, so planning, pacing and token accounting are the same for
// every route, and writes its own reply frames.
var (
	responsesEndpoint = endpoint{chat: true, idPrefix: "resp_", parse: parseResponses, wire: func(bool) tokenWire { return &responsesWire{} }}
	messagesEndpoint  = endpoint{chat: true, idPrefix: "msg_", parse: parseMessages, wire: func(bool) tokenWire { return &messagesWire{} }, errorReply: writeAnthropicError}
	tgiEndpoint       = endpoint{idPrefix: "tgi-", parse: parseTGI, wire: func(bool) tokenWire { return tgiWire{} }}
	tgiStreamEndpoint = endpoint{idPrefix: "tgi-", parse: parseTGI, wire: func(bool) tokenWire { return tgiWire{} }, stream: true}
)

// parseResponses reads {"model", "input": string | items, "instructions",
// "max_output_tokens", "stream"}.
func parseResponses(raw []byte, _ bool) (*completionRequest, error) {
	var v struct {
		Model        string          `json:"model"`
		Input        json.RawMessage `json:"input"`
		Instructions *string         `json:"instructions"`
		MaxOutput    *intParam       `json:"max_output_tokens"`
		Stream       bool            `json:"stream"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decode request body: %w", err)
	}
	req := &completionRequest{Model: v.Model, MaxTokens: v.MaxOutput, Stream: v.Stream}
	if v.Instructions != nil {
		s, _ := json.Marshal(*v.Instructions)
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: s})
	}
	switch shape(v.Input) {
	case shapeString:
		req.Messages = append(req.Messages, chatMessage{Role: "user", Content: v.Input})
	case shapeParts:
		var items []chatMessage
		if err := json.Unmarshal(v.Input, &items); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		req.Messages = append(req.Messages, items...)
	default:
		return nil, errors.New("input is required: a string or a list of message items")
	}
	return req, nil
}

// parseMessages reads {"model", "messages", "system", "max_tokens",
// "stream"}; max_tokens is required and a message's role is user or
// assistant (the system prompt is the top-level "system"), as Anthropic's
// API has it.
func parseMessages(raw []byte, _ bool) (*completionRequest, error) {
	var v struct {
		Model     string          `json:"model"`
		Messages  []chatMessage   `json:"messages"`
		System    json.RawMessage `json:"system"`
		MaxTokens *intParam       `json:"max_tokens"`
		Stream    bool            `json:"stream"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decode request body: %w", err)
	}
	if v.MaxTokens == nil {
		return nil, errors.New("max_tokens: field required")
	}
	if err := messageRoles(v.Messages); err != nil {
		return nil, err
	}
	req := &completionRequest{Model: v.Model, MaxTokens: v.MaxTokens, Stream: v.Stream}
	if len(v.System) > 0 && shape(v.System) != shapeNull {
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: v.System})
	}
	req.Messages = append(req.Messages, v.Messages...)
	return req, nil
}

// messageRoles refuses a message whose role is not user or assistant, in
// the words of Anthropic's API.
func messageRoles(msgs []chatMessage) error {
	for i, m := range msgs {
		switch m.Role {
		case "user", "assistant":
		case "system":
			return errors.New(`messages: Unexpected role "system". The Messages API accepts a top-level ` +
				"`system` parameter, not \"system\" as an input message role.")
		default:
			return fmt.Errorf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
	}
	return nil
}

// writeAnthropicError answers with an error in the shape of Anthropic's
// API: {"type": "error", "error": {"type", "message"}}.
func writeAnthropicError(w http.ResponseWriter, status int, typ, msg string) {
	type apiError struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	writeJSON(w, status, struct {
		Type  string   `json:"type"`
		Error apiError `json:"error"`
	}{"error", apiError{Type: typ, Message: msg}})
}

// parseTGI reads {"inputs", "parameters": {"max_new_tokens"}}; the route
// says whether it streams.
func parseTGI(raw []byte, stream bool) (*completionRequest, error) {
	var v struct {
		Inputs     json.RawMessage `json:"inputs"`
		Parameters struct {
			MaxNewTokens *intParam `json:"max_new_tokens"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decode request body: %w", err)
	}
	if shape(v.Inputs) != shapeString {
		return nil, errors.New("inputs must be a string")
	}
	return &completionRequest{Prompt: v.Inputs, MaxTokens: v.Parameters.MaxNewTokens, Stream: stream}, nil
}

// responsesWire writes the Responses API: response.created, an
// output_text delta per token, output_text.done, response.completed with
// the usage.
type responsesWire struct{}

func (responsesWire) start(*generation) {}
func (responsesWire) release()          {}
func (responsesWire) end() []byte       { return nil }

// usage is the Responses API's usage: input_tokens counts the cached ones,
// also reported in input_tokens_details.cached_tokens (unless
// --no-cache-report), as OpenAI does.
func (responsesWire) usage(g *generation) map[string]any {
	u := map[string]any{"input_tokens": g.usage.PromptTokens, "output_tokens": g.usage.CompletionTokens,
		"total_tokens": g.usage.TotalTokens}
	if d := g.usage.PromptDetails; d != nil {
		u["input_tokens_details"] = map[string]int{"cached_tokens": d.CachedTokens}
	}
	return u
}

func (w responsesWire) object(g *generation, status string, done bool) map[string]any {
	o := map[string]any{"id": g.id, "object": "response", "created_at": g.created, "model": g.model, "status": status, "output": []any{}}
	if done {
		o["output"] = []any{map[string]any{"type": "message", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": g.text(0, g.tokens), "annotations": []any{}}}}}
		o["usage"] = w.usage(g)
	}
	return o
}

func (w responsesWire) open(g *generation) []byte {
	return sseFrame("response.created", map[string]any{"type": "response.created", "response": w.object(g, "in_progress", false)})
}

func (responsesWire) token(g *generation, k int) []byte {
	return sseFrame("response.output_text.delta", map[string]any{"type": "response.output_text.delta",
		"item_id": "msg_" + g.id, "output_index": 0, "content_index": 0, "delta": word(k)})
}

func (w responsesWire) tail(g *generation) []byte {
	done := sseFrame("response.output_text.done", map[string]any{"type": "response.output_text.done",
		"item_id": "msg_" + g.id, "output_index": 0, "content_index": 0, "text": g.text(0, g.tokens)})
	return append(done, sseFrame("response.completed", map[string]any{"type": "response.completed",
		"response": w.object(g, "completed", true)})...)
}

func (w responsesWire) whole(g *generation) any { return w.object(g, "completed", true) }

// messagesWire writes Anthropic Messages: message_start (input tokens),
// content_block_start, a text_delta per token, content_block_stop,
// message_delta (output tokens), message_stop.
type messagesWire struct{}

func (messagesWire) start(*generation) {}
func (messagesWire) release()          {}

func (messagesWire) stopReason(g *generation) string {
	if g.finish == "length" {
		return "max_tokens"
	}
	return "end_turn"
}

func (messagesWire) open(g *generation) []byte {
	msg := map[string]any{"id": g.id, "type": "message", "role": "assistant", "model": g.model, "content": []any{},
		"stop_reason": nil, "usage": messagesUsage(g, 1)}
	b := sseFrame("message_start", map[string]any{"type": "message_start", "message": msg})
	return append(b, sseFrame("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]string{"type": "text", "text": ""}})...)
}

func (messagesWire) token(_ *generation, k int) []byte {
	return sseFrame("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
		"delta": map[string]string{"type": "text_delta", "text": word(k)}})
}

func (w messagesWire) tail(g *generation) []byte {
	b := sseFrame("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	return append(b, sseFrame("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": w.stopReason(g)}, "usage": map[string]int{"output_tokens": g.usage.CompletionTokens}})...)
}

func (messagesWire) end() []byte {
	return sseFrame("message_stop", map[string]string{"type": "message_stop"})
}

func (w messagesWire) whole(g *generation) any {
	return map[string]any{"id": g.id, "type": "message", "role": "assistant", "model": g.model,
		"content":     []any{map[string]string{"type": "text", "text": g.text(0, g.tokens)}},
		"stop_reason": w.stopReason(g), "usage": messagesUsage(g, g.usage.CompletionTokens)}
}

// messagesUsage is the Messages API's usage with output tokens: as
// Anthropic counts them, the prompt tokens read from the cache are
// cache_read_input_tokens and input_tokens the rest (unless
// --no-cache-report: then all are input_tokens).
func messagesUsage(g *generation, output int) map[string]int {
	u := map[string]int{"input_tokens": g.usage.PromptTokens, "output_tokens": output}
	if d := g.usage.PromptDetails; d != nil {
		u["input_tokens"] -= d.CachedTokens
		u["cache_read_input_tokens"] = d.CachedTokens
	}
	return u
}

// tgiWire writes TGI: a token event per token, the last one carrying
// generated_text and details.
type tgiWire struct{}

func (tgiWire) start(*generation)       {}
func (tgiWire) release()                {}
func (tgiWire) open(*generation) []byte { return nil }
func (tgiWire) tail(*generation) []byte { return nil }
func (tgiWire) end() []byte             { return nil }
func (tgiWire) details(g *generation) any {
	return map[string]any{"finish_reason": g.finish, "generated_tokens": g.tokens}
}

func (w tgiWire) token(g *generation, k int) []byte {
	ev := map[string]any{"index": k + 1, "token": map[string]any{"id": k, "text": word(k), "logprob": 0, "special": false},
		"generated_text": nil, "details": nil}
	if k == g.tokens-1 {
		ev["generated_text"], ev["details"] = g.text(0, g.tokens), w.details(g)
	}
	return sseFrame("", ev)
}

func (w tgiWire) whole(g *generation) any {
	return map[string]any{"generated_text": g.text(0, g.tokens), "details": w.details(g)}
}
