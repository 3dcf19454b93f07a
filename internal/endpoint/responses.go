package endpoint

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// responsesBody is an OpenAI Responses API body: the conversation as
// "input" message items, a system prompt as "instructions",
// "max_output_tokens".
func responsesBody(req *Request) map[string]any {
	m := make(map[string]any, 5+len(req.Extra)+len(req.TurnExtra))
	m["model"] = req.Model
	m["stream"] = req.Streaming
	system, msgs := splitSystem(req)
	if system != "" {
		m["instructions"] = system
	}
	if msgs == nil {
		m["input"] = req.RawMessages
	} else {
		items := make([]map[string]string, len(msgs))
		for i, msg := range msgs {
			items[i] = map[string]string{"type": "message", "role": msg.Role, "content": msg.Content}
		}
		m["input"] = items
	}
	if req.MaxTokens > 0 {
		m["max_output_tokens"] = req.MaxTokens
	}
	if len(req.Tools) > 0 {
		m["tools"] = req.Tools
	}
	return m
}

// splitSystem separates a leading system message (the shared system
// prompt) from the conversation, for APIs that carry it apart; msgs is nil
// when the request's messages are raw JSON, sent as they are.
func splitSystem(req *Request) (system string, msgs []Message) {
	switch {
	case len(req.RawMessages) > 0:
		return "", nil
	case req.Messages != nil:
		msgs = req.Messages
	default:
		msgs = []Message{{Role: "user", Content: req.Prompt}}
	}
	if len(msgs) > 0 && msgs[0].Role == "system" {
		return msgs[0].Content, msgs[1:]
	}
	return "", msgs
}

// responsesUsage is the Responses API's usage object.
type responsesUsage struct {
	InputTokens         usageCount         `json:"input_tokens"`
	OutputTokens        usageCount         `json:"output_tokens"`
	TotalTokens         usageCount         `json:"total_tokens"`
	InputTokensDetails  *promptDetails     `json:"input_tokens_details"`
	OutputTokensDetails *completionDetails `json:"output_tokens_details"`
}

func (u *responsesUsage) metrics() *metrics.Usage {
	if u == nil {
		return nil
	}
	w := wireUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens,
		InputTokensDetails: u.InputTokensDetails, CompletionTokensDetails: u.OutputTokensDetails}
	return w.named(metrics.InputOutputNames)
}

// responseObject is a Responses API response (a whole body, or the
// "response" of a lifecycle event).
type responseObject struct {
	Object string          `json:"object"`
	Status string          `json:"status"`
	Error  json.RawMessage `json:"error"`
	Output []struct {
		Type    string `json:"type"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Summary []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"summary"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"output"`
	OutputText string          `json:"output_text"`
	Usage      *responsesUsage `json:"usage"`
}

// failure is the error of a failed response, nil otherwise.
func (r *responseObject) failure(status int) *metrics.Error {
	if e := errorField(r.Error, status); e != nil {
		return e
	}
	if r.Status == "failed" || r.Status == "cancelled" {
		return &metrics.Error{Code: status, Type: ErrTypeStream, Message: "the response ended with status " + r.Status}
	}
	return nil
}

// output is the generated text and reasoning of the output items.
func (r *responseObject) output() (text, reasoning string) {
	var tool string
	for _, item := range r.Output {
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				if c.Type == "output_text" {
					text += c.Text
				}
			}
		case "reasoning":
			for _, s := range item.Summary {
				if s.Type == "summary_text" {
					reasoning += s.Text
				}
			}
		case "function_call":
			tool += item.Name + item.Arguments
		}
	}
	if text == "" && reasoning == "" && tool == "" {
		text = r.OutputText
	}
	if text == "" {
		text = tool
	}
	return text, reasoning
}

// responsesFormat reads the Responses API.
type responsesFormat struct{}

func (responsesFormat) label() string { return "OpenAI Responses" }

func (responsesFormat) stream() streamDecoder { return &responsesStream{streamed: map[[2]int]bool{}} }

func (responsesFormat) whole(b []byte, status int) (piece, string) {
	if e := wholeError(b, status); e != nil {
		return piece{err: e}, ""
	}
	var r responseObject
	if why := decodeObject(b, &r); why != "" {
		return piece{}, why
	}
	if r.Object != "response" {
		return piece{}, `the JSON body is not a response object ("object": "response")`
	}
	if e := r.failure(status); e != nil {
		return piece{err: e}, ""
	}
	var out struct {
		Output json.RawMessage `json:"output"`
	}
	if json.Unmarshal(b, &out) == nil && (len(out.Output) == 0 || isNull(out.Output)) {
		return piece{}, "the response has no output (an array of output items)"
	}
	text, reasoning := r.output()
	return piece{text: text, reasoning: reasoning, usage: r.Usage.metrics()}, ""
}

// responsesStream reads the events of a streamed response. The final text
// arrives twice, as deltas and as response.output_text.done: the done
// event's text is taken only for a part no delta carried.
type responsesStream struct {
	streamed map[[2]int]bool // (output_index, content_index) parts with deltas
	events   bool            // an event of the API was read
}

func (s *responsesStream) eofEnds() bool { return false }

func (s *responsesStream) event(name string, data []byte, status int) (piece, eventKind) {
	if isDone(data) {
		if s.events { // the stream's end is response.completed (or failed, incomplete), never [DONE] alone
			return piece{err: &metrics.Error{Code: status, Type: ErrTypeIncompleteStream,
				Message: "data: [DONE] arrived before response.completed (the stream ended without its final event)"}}, kindChunk
		}
		return piece{end: true}, kindEnd
	}
	p, kind := s.decode(data, status)
	if kind == kindChunk {
		s.events = true
	}
	return p, kind
}

// decode decodes one event of the stream.
func (s *responsesStream) decode(data []byte, status int) (piece, eventKind) {
	var ev struct {
		Type         string          `json:"type"`
		Delta        string          `json:"delta"`
		Text         string          `json:"text"`
		OutputIndex  int             `json:"output_index"`
		ContentIndex int             `json:"content_index"`
		Response     *responseObject `json:"response"`
		Code         json.RawMessage `json:"code"`
		Message      string          `json:"message"`
	}
	if data[0] != '{' || json.Unmarshal(data, &ev) != nil || ev.Type == "" {
		return piece{}, kindMalformed
	}
	part := [2]int{ev.OutputIndex, ev.ContentIndex}
	switch ev.Type {
	case "response.output_text.delta":
		s.streamed[part] = ev.Delta != ""
		return piece{text: ev.Delta}, kindChunk
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		return piece{reasoning: ev.Delta}, kindChunk
	case "response.function_call_arguments.delta":
		return piece{text: ev.Delta}, kindChunk
	case "response.output_text.done":
		if s.streamed[part] {
			return piece{}, kindChunk
		}
		return piece{text: ev.Text}, kindChunk
	case "response.completed", "response.incomplete":
		p := piece{end: true}
		if ev.Response != nil {
			if want := strings.TrimPrefix(ev.Type, "response."); ev.Response.Status != "" && ev.Response.Status != want {
				// response.completed of a failed response: not an event of the API
				return piece{invalid: fmt.Sprintf("%s carries response.status %q, expected %q",
					ev.Type, shortValue(ev.Response.Status), want)}, kindChunk
			}
			p.usage = ev.Response.Usage.metrics()
		}
		return p, kindChunk
	case "response.failed":
		e := &metrics.Error{Code: status, Type: ErrTypeStream, Message: "response.failed"}
		if ev.Response != nil {
			if f := ev.Response.failure(status); f != nil {
				e = f
			}
		}
		return piece{err: e}, kindChunk
	case "error":
		msg := ev.Message
		if msg == "" {
			msg = bodyMessage(data)
		}
		return piece{err: &metrics.Error{Code: errorCode(data, status), Type: ErrTypeStream, Message: truncate(msg)}}, kindChunk
	}
	return piece{}, kindSkip
}
