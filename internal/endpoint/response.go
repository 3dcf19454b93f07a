package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// Error types set in metrics.Error.Type.
const (
	// ErrTypeHTTP is a non-2xx response; Code is its status.
	ErrTypeHTTP = "HTTPError"
	// ErrTypeStream is an error object inside a 200 response: an SSE error
	// frame ({"error":…} or "event: error") or a JSON error body.
	ErrTypeStream = "StreamError"
	// ErrTypeIncompleteStream is a stream that ended or broke before [DONE].
	ErrTypeIncompleteStream = "IncompleteStream"
	// ErrTypeIncompleteResponse is a non-streaming body that broke while read.
	ErrTypeIncompleteResponse = "IncompleteResponse"
	// ErrTypeConnection is a failure to connect, send or receive headers.
	ErrTypeConnection = "ConnectionError"
	// ErrTypeTimeout is a request that hit the per-request timeout.
	ErrTypeTimeout = "Timeout"
	// ErrTypeCancelled is a request cancelled on purpose
	// (--request-cancellation-rate) or by the caller (its context); its
	// Code is metrics.CancelledCode, not the status.
	ErrTypeCancelled = metrics.CancelledType
	// ErrTypeRequest is a request that could not be built (bad URL, body).
	ErrTypeRequest = "RequestError"
	// ErrTypeInvalidResponse is a 2xx whose body is not an API response:
	// an HTML page, a JSON object without choices, a stream without a
	// single response chunk, a body that cannot be decoded.
	ErrTypeInvalidResponse = "InvalidResponse"
	// ErrTypeTooLarge is a response line, event or body beyond the
	// client's size limit.
	ErrTypeTooLarge = "ResponseTooLarge"
	// ErrTypeClient is the client host out of a resource (file
	// descriptors, local ports, memory): the client's failure, not the
	// server's.
	ErrTypeClient = "ClientError"
)

// maxMessage bounds error messages taken from response bodies.
const maxMessage = 200

// Chunk is one response that carried generated text.
type Chunk struct {
	At        int64  // sse.Event.At of the chunk's event, or when a non-streaming body was fully read
	Text      string // content, including tool calls' function names and arguments
	Reasoning string // reasoning_content or reasoning
}

// Response is the measured outcome of one request.
type Response struct {
	Status int     // HTTP status; 0 when no response arrived
	Chunks []Chunk // only responses with non-empty text or reasoning
	// Usage is the last non-null usage object seen: a separate choices:[]
	// chunk (OpenAI, vLLM) or the last choice chunk (llama-server).
	Usage *metrics.Usage
	// Images is the images an image generation or edit reply carried.
	Images int
	// SentBytes is the size of the request body sent.
	SentBytes int
	// Video is a finished video job's figures (video_generation).
	Video *VideoStats
	job   string // the video job submitted
	// SpecDecode is the last speculative-decoding acceptance the server
	// reported (vLLM's metrics.speculative_decoding), nil when none.
	SpecDecode *metrics.SpecDecode
	// SentNs is taken immediately before the request is handed to the
	// transport (of the first attempt, when Retried); EndNs when the response ended
	// ([DONE] read, body read) or failed.
	SentNs, EndNs int64
	Err           *metrics.Error // nil on success
	// MalformedChunks counts the stream's data lines that were not response
	// chunks (unparseable, or JSON of another shape); they were skipped.
	MalformedChunks int
	// Retried reports that the first attempt failed on a reused connection
	// before any response byte and the request was sent again on a fresh one.
	Retried bool
	// Cancelled reports a request aborted on purpose (Request.Cancel).
	Cancelled bool
	// NotSent reports a request that reached the transport at or after
	// its Request.SendBy: it was not sent.
	NotSent bool
	// Whole reports a reply read as one body, not as a stream: a JSON
	// reply to a request that asked to stream (Request.Streaming) is one.
	Whole bool
	// HTTP is the exchange's trace (Options.Trace), nil untraced.
	HTTP *metrics.HTTPTrace

	tracer *tracer // tracing the attempt being read (Options.Trace)

	raw    *metrics.Raw // Request.Raw, filled while reading
	others otherChoices // output on choices other than choice 0
	// text and reasoning hold every chunk's Text and Reasoning, in order:
	// the chunks' strings alias them, and appending never rewrites the
	// bytes they alias. textHint is the capacity text starts with.
	text, reasoning []byte
	textHint        int
	// kept is the bytes a stream has kept so far: its chunks (their text,
	// reasoning and record) and its raw events; dropped is the bytes it
	// read and kept nothing of (comments, events without text, malformed
	// lines). readStream bounds the two together.
	kept, dropped int
}

// appendChunk keeps a chunk read at at, copying its text and reasoning (the
// decoder's, valid only until its next event) into the response's own
// buffers: no allocation per chunk once they have grown.
func (r *Response) appendChunk(at int64, text, reasoning string) {
	if r.text == nil && text != "" {
		r.text = make([]byte, 0, max(r.textHint, len(text)))
	}
	r.Chunks = append(r.Chunks, Chunk{At: at, Text: own(&r.text, text), Reasoning: own(&r.reasoning, reasoning)})
	r.kept += chunkBytes + len(text) + len(reasoning)
}

// own appends s to *buf and returns the appended bytes as a string.
func own(buf *[]byte, s string) string {
	if s == "" {
		return ""
	}
	start := len(*buf)
	*buf = append(*buf, s...)
	return unsafe.String(&(*buf)[start], len(s))
}

// Output is the text and the reasoning of all the chunks, concatenated,
// without copying them.
func (r *Response) Output() (text, reasoning string) {
	return unsafe.String(unsafe.SliceData(r.text), len(r.text)), unsafe.String(unsafe.SliceData(r.reasoning), len(r.reasoning))
}

// keep records a response as read into the request's Raw, if any.
func (r *Response) keep(at int64, event string, data []byte, whole bool) {
	if r.raw != nil {
		r.raw.Responses = append(r.raw.Responses, metrics.RawResponse{At: at, Event: event, Data: bytes.Clone(data), Whole: whole})
		r.kept += len(event) + len(data)
	}
}

// wireChunk is the union of the response shapes we read: chat chunks and
// completions, completions chunks and completions, usage-only chunks and
// error frames. Unknown fields are skipped by the decoder.
type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Metrics *wireMetrics    `json:"metrics"` // vLLM's per-request metrics (specdecode.go)

	// usageRaw is the usage object's bytes when decodeStreamed left it
	// undecoded (Usage is then nil).
	usageRaw []byte
	// hasChoices is set by decodeChunk when "choices" held an array.
	hasChoices bool
	// errorObject is set by decodeChunk when "object" was "error": vLLM's
	// ErrorResponse, sent unwrapped (flatError).
	errorObject bool
}

type wireChoice struct {
	Index   choiceIndex `json:"index"`   // which of n choices; absent means 0
	Text    string      `json:"text"`    // completions
	Delta   wireMessage `json:"delta"`   // chat chunk
	Message wireMessage `json:"message"` // chat completion

	// has records which of text, delta and message the choice held, which
	// were null, and whether it had finished (set by the scanner of
	// decode.go only).
	has choiceFields
	// reason is a finish_reason that gave the generation up, as sent
	// (aborted; a copy, kept for the error's message).
	reason []byte
}

// choiceFields are the members a choice held (wireChoice.has).
type choiceFields uint8

const (
	hasText choiceFields = 1 << iota
	hasDelta
	hasMessage
	nullText
	nullDelta
	nullMessage
	// finished is a choice whose finish_reason is a non-empty string: the
	// server says its generation ended.
	finished
	// aborted is a choice whose finish_reason says the server gave it up
	// (abortReason): the request failed.
	aborted
)

// choiceIndex is a choice's "index": absent means 0. Anything but a
// non-negative integer (null, a string such as "0", a fraction) reads as
// badIndex, which matches no choice and makes the reply invalid
// (wireChunk.shapeProblem).
type choiceIndex int

// badIndex is an index that is not a non-negative integer.
const badIndex choiceIndex = -1

// UnmarshalJSON implements json.Unmarshaler; it never fails.
func (c *choiceIndex) UnmarshalJSON(b []byte) error {
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 0 {
		n = int(badIndex)
	}
	*c = choiceIndex(n)
	return nil
}

type wireMessage struct {
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content"` // SGLang, TRT-LLM, older vLLM
	Reasoning        string     `json:"reasoning"`         // vLLM since #27752
	ToolCalls        []toolCall `json:"tool_calls"`
}

// toolCall is a tool call of a chat reply: the function's name and its
// arguments are both generated text (AIPerf's extract_chat_response_data
// counts name + arguments).
type toolCall struct {
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// openaiAPI is the OpenAI API a reply answers: its choices' shape.
type openaiAPI int

const (
	apiChat        openaiAPI = iota // choices[].message, choices[].delta in a stream
	apiCompletions                  // choices[].text
)

// what names the API's reply in messages.
func (a openaiAPI) what() string {
	if a == apiCompletions {
		return "a completions reply"
	}
	return "a chat completions reply"
}

// shapeProblem says why a decoded reply (stream: a stream chunk) is not
// of api's shape, "" when it is: a choice whose index is not a
// non-negative integer; for chat, a choice that
// lacks its message (a whole reply) or carries text or a message but no
// delta (a stream chunk); for completions, a choice that lacks its text (a
// whole reply) or carries a delta or message but no text (a stream chunk).
//
// The shape is judged by the choices' fields, not by "object": servers
// label replies loosely (TGI 1.4 sent chat stream chunks as
// "text_completion"), and a reply of the other API lacks this one's field.
func (w *wireChunk) shapeProblem(api openaiAPI, stream bool) string {
	for i := range w.Choices {
		c := &w.Choices[i]
		if c.Index == badIndex {
			return fmt.Sprintf("choices[%d].index is not a non-negative integer", i)
		}
		switch {
		case api == apiChat && stream:
			if c.has&hasDelta == 0 && c.has&(hasText|hasMessage) != 0 {
				return fmt.Sprintf("choices[%d] has no delta object (%s's stream chunks carry one)", i, api.what())
			}
		case api == apiChat:
			if c.has&hasMessage == 0 {
				if c.has&nullMessage != 0 {
					return fmt.Sprintf("choices[%d].message is null, expected an object (%s)", i, api.what())
				}
				return fmt.Sprintf("choices[%d] has no message object (%s's choices carry one)", i, api.what())
			}
		case stream:
			if c.has&hasText == 0 && c.has&(hasDelta|hasMessage) != 0 {
				return fmt.Sprintf("choices[%d] has no text (%s's stream chunks carry it, not a delta or message)", i, api.what())
			}
		default:
			if c.has&hasText == 0 {
				if c.has&nullText != 0 {
					return fmt.Sprintf("choices[%d].text is null, expected a string (%s)", i, api.what())
				}
				return fmt.Sprintf("choices[%d] has no text (%s's choices carry one)", i, api.what())
			}
		}
	}
	return ""
}

// reset empties w for the next decode, keeping its choices slot.
func (w *wireChunk) reset() {
	clear(w.Choices[:cap(w.Choices)])
	*w = wireChunk{Choices: w.Choices[:0], Error: w.Error[:0]}
}

// shaped reports whether the chunk has the shape of an OpenAI response or
// stream chunk: a choices array (possibly empty), a usage object or an error.
func (w *wireChunk) shaped() bool {
	return w.hasChoices || w.hasUsage() || (len(w.Error) > 0 && !isNull(w.Error))
}

// hasUsage reports whether the chunk carried a usage object, decoded or
// not (usageRaw).
func (w *wireChunk) hasUsage() bool { return w.Usage != nil || w.usageRaw != nil }

// first returns the choice with index 0, nil if there is none. Only that
// choice is measured: the text of other choices (n > 1) is never merged
// into it.
func (w *wireChunk) first() *wireChoice {
	for i := range w.Choices {
		if w.Choices[i].Index == 0 {
			return &w.Choices[i]
		}
	}
	return nil
}

// output returns the generated text of choice 0.
func (w *wireChunk) output() (text, reasoning string) {
	if c := w.first(); c != nil {
		return c.output()
	}
	return "", ""
}

// output returns the generated text of the choice: its text, content and
// each tool call's function name and arguments, and its reasoning. A piece
// that is alone non-empty (a stream chunk's usual case) is returned as it
// is, not copied.
func (c *wireChoice) output() (text, reasoning string) {
	m := &c.Delta
	if m.Content == "" && m.ReasoningContent == "" && m.Reasoning == "" && len(m.ToolCalls) == 0 {
		m = &c.Message
	}
	text = c.Text + m.Content
	for _, tc := range m.ToolCalls {
		text += tc.Function.Name
		text += tc.Function.Arguments
	}
	reasoning = m.ReasoningContent
	if reasoning == "" {
		reasoning = m.Reasoning
	}
	return text, reasoning
}

// other returns the index of the first choice but choice 0 that carries
// output (text the measured choice never got), ok false if none does.
func (w *wireChunk) other() (index int, ok bool) {
	for i := range w.Choices {
		if c := &w.Choices[i]; c.Index != 0 && c.carries() {
			return int(c.Index), true
		}
	}
	return 0, false
}

// carries reports whether the choice holds any generated text.
func (c *wireChoice) carries() bool {
	text, reasoning := c.output()
	return text != "" || reasoning != ""
}

// failure returns the error carried by the chunk, nil if it carries none:
// its error member, or choice 0 given up (aborted).
// status is the HTTP status, used when the error has no numeric code.
func (w *wireChunk) failure(status int) *metrics.Error {
	if len(w.Error) == 0 || isNull(w.Error) {
		if c := w.first(); c != nil && c.has&aborted != 0 {
			return &metrics.Error{Code: status, Type: ErrTypeStream,
				Message: "the server gave the generation up: finish_reason " + truncate(string(c.reason))}
		}
		return nil
	}
	return &metrics.Error{Code: errorCode(w.Error, status), Type: ErrTypeStream, Message: errorText(w.Error)}
}

// asciiLower is b with A-Z lowered and every other byte as it is: indexes
// into it are indexes into b (bytes.ToLower changes lengths: the Kelvin
// sign, invalid UTF-8).
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// isHTML reports a body that is an HTML page.
func isHTML(b []byte) bool {
	head := bytes.TrimLeft(b[:min(len(b), 512)], " \t\r\n")
	for _, p := range []string{"<!doctype html", "<html", "<head", "<title"} {
		if len(head) >= len(p) && bytes.EqualFold(head[:len(p)], []byte(p)) {
			return true
		}
	}
	return false
}

// htmlText is an HTML page's text: its tags dropped (a <style> or <script>
// element whole), entities decoded, runs of white space one space, and a
// piece of text between tags that repeats the piece before it left out (an
// error page's <title> and <h1> usually say the same).
func htmlText(b []byte) string {
	var (
		pieces []string
		cur    []byte
	)
	flush := func() {
		t := strings.Join(strings.Fields(html.UnescapeString(string(cur))), " ")
		cur = cur[:0]
		if t != "" && (len(pieces) == 0 || pieces[len(pieces)-1] != t) {
			pieces = append(pieces, t)
		}
	}
	lower := asciiLower(b)
	unclosed := map[string]bool{} // looked for once: the text stays linear
	for i := 0; i < len(b); {
		if b[i] != '<' {
			cur = append(cur, b[i])
			i++
			continue
		}
		end := bytes.IndexByte(b[i:], '>')
		if end < 0 {
			break
		}
		for _, el := range []string{"style", "script"} {
			if !unclosed[el] && bytes.HasPrefix(lower[i+1:], []byte(el)) {
				close := bytes.Index(lower[i:], []byte("</"+el))
				unclosed[el] = close < 0
				if close > end {
					end = close + bytes.IndexByte(b[i+close:], '>')
				}
			}
		}
		flush()
		i += end + 1
	}
	flush()
	return strings.Join(pieces, " ")
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// truncate trims s and cuts it to maxMessage bytes on a rune boundary.
func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
