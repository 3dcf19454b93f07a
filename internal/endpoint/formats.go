package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// A format is one API's response shape: how a stream's events and a whole
// body become generated text, usage and errors. The read loop (read.go) is
// the same for every API; formats only decode.
type format interface {
	// label names the API in "not a … response" messages.
	label() string
	// stream returns the decoder of one streamed response.
	stream() streamDecoder
	// whole decodes a non-streaming body (trimmed, non-empty); a non-empty
	// invalid says why it is not a response of the API.
	whole(body []byte, status int) (p piece, invalid string)
}

// streamDecoder decodes the events of one stream, in order.
type streamDecoder interface {
	// event decodes one SSE event (its name and trimmed, non-empty data).
	// The piece's text and reasoning may alias data or the decoder's own
	// buffers: they are valid only until the next call.
	event(name string, data []byte, status int) (piece, eventKind)
	// eofEnds reports whether the end of the body ends the stream normally
	// once a response event was read (APIs without an end marker).
	eofEnds() bool
}

// eventKind classifies one stream event.
type eventKind int

const (
	// kindSkip is an event that carries nothing measured (a ping, an
	// envelope such as response.created); it is not malformed.
	kindSkip eventKind = iota
	// kindMalformed is a data line that is not an event of the API.
	kindMalformed
	// kindChunk is a response event; piece.end marks the stream's last.
	kindChunk
	// kindEnd is the end marker itself ([DONE], message_stop), not a
	// response event: a stream of only it is invalid.
	kindEnd
)

// piece is what one event or body holds.
type piece struct {
	text, reasoning string
	usage           *metrics.Usage      // nil: none in this event
	spec            *metrics.SpecDecode // nil: no speculative-decoding acceptance in this event
	err             *metrics.Error      // the API reported a failure
	end             bool                // the stream's last event
	// other is a choice other than choice 0 that carried output, when
	// hasOther (OpenAI's n > 1, or a server numbering its one choice 1).
	other    int
	hasOther bool
	// images is the images a generation reply carries (imagesFormat).
	images int
	// job is a video job's id (videoFormat).
	job string
	// why says why a kindMalformed event is not one of the API's.
	why string
	// invalid, set on a kindChunk event, says why the event makes the
	// whole reply invalid (an event of the API that contradicts itself).
	invalid string
}

// formatFor is the format of a request's endpoint type.
func formatFor(req *Request) format {
	switch req.EndpointType {
	case plan.EndpointEmbeddings, plan.EndpointNIMEmbeddings:
		return embeddingsFormat{inputs: sentCount(req, max(1, len(req.Inputs))), base64: asksBase64(req)}
	case plan.EndpointChatEmbeddings: // one conversation sent: one embedding
		return embeddingsFormat{inputs: sentCount(req, 1), base64: asksBase64(req)}
	case plan.EndpointNIMRankings, plan.EndpointHFTEIRankings, plan.EndpointCohereRankings:
		return rankingsFormat{typ: req.EndpointType, passages: sentCount(req, len(req.Passages))}
	case plan.EndpointResponses:
		return responsesFormat{}
	case plan.EndpointMessages:
		return messagesFormat{}
	case plan.EndpointHuggingFaceGenerate:
		return tgiFormat{}
	case plan.EndpointTemplate, plan.EndpointRaw:
		return detectFormat{field: req.ResponseField}
	case plan.EndpointImageGeneration, plan.EndpointImageEdit:
		return imagesFormat{n: askedImages(req)}
	case plan.EndpointVideoGeneration:
		return videoFormat{}
	case plan.EndpointImageRetrieval:
		return retrievalFormat{images: sentCount(req, countImages(req))}
	case plan.EndpointSolidoRAG:
		return solidoFormat{}
	case plan.EndpointAudioTranscription:
		return transcriptionFormat{}
	}
	if req.EndpointType == plan.EndpointCompletions {
		return openaiFormat{api: apiCompletions, req: req}
	}
	return openaiFormat{api: apiChat, req: req}
}

// asksUsage reports whether a chat or completions request asks for the
// usage chunk at the end of its stream (stream_options.include_usage): the
// body aiperf builds asks for it when it streams, unless --extra-inputs or
// the turn's extra set include_usage false; a payload sent as it is asks
// for it when it says so.
func asksUsage(req *Request) bool {
	var so any
	if len(req.Payload) > 0 {
		var p struct {
			StreamOptions any `json:"stream_options"`
		}
		if json.Unmarshal(req.Payload, &p) != nil {
			return false
		}
		so = p.StreamOptions
	} else {
		so = streamOptions(req) // include_usage unless the author's stream_options say otherwise
	}
	b, err := json.Marshal(so)
	var o struct {
		IncludeUsage bool `json:"include_usage"`
	}
	return err == nil && json.Unmarshal(b, &o) == nil && o.IncludeUsage
}

// sentCount is n, the items the request body sends, or -1 (not known)
// when a payload is sent as it is.
func sentCount(req *Request, n int) int {
	if len(req.Payload) > 0 {
		return -1
	}
	return n
}

// openaiFormat is chat and completions: the scanner of decode.go. Each
// reply must have its API's shape (wireChunk.shapeProblem): a completions
// reply on the chat route, or a chat reply on the completions route, is
// not an answer to the request. req is the request, read only when a
// stream ends without [DONE] (asksUsage: it may parse a whole payload, so
// never while a reply is being timed).
//
// strict is --require-stream-completion's check of a streamed chat reply
// (strict.go): the read loop fails the events it would otherwise skip, and
// a stream without [DONE] needs a finish_reason on every choice seen.
type openaiFormat struct {
	api    openaiAPI
	req    *Request
	strict bool
}

func (openaiFormat) label() string { return "OpenAI" }

func (f openaiFormat) stream() streamDecoder {
	return &openaiStream{api: f.api, req: f.req, choices: choiceSet{on: f.strict},
		perChunk: f.api == apiChat && f.req != nil && f.req.PerChunkUsage}
}

func (f openaiFormat) whole(b []byte, status int) (piece, string) {
	var w wireChunk
	if b[0] != '{' {
		return piece{}, "the body is not a JSON object"
	}
	if err := decodeChunk(b, &w); err != nil {
		return piece{}, openaiProblem(b)
	}
	if e := w.failure(status); e != nil {
		return piece{err: e}, ""
	}
	if e := flatError(&w, b, status); e != nil {
		return piece{err: e}, ""
	}
	if !w.hasChoices {
		return piece{}, "the JSON body has no choices"
	}
	if why := w.shapeProblem(f.api, false); why != "" {
		return piece{}, why
	}
	if w.first() == nil {
		return piece{}, "the JSON body has no choice with index 0"
	}
	p := piece{usage: w.usage(), spec: w.specDecode()}
	p.text, p.reasoning = w.output()
	p.other, p.hasOther = w.other()
	return p, ""
}

// openaiStream reuses one decode target for the whole stream; its events
// are decoded without allocating (decodeTransient), so the text of a piece
// is valid only until the next event.
type openaiStream struct {
	api     openaiAPI
	w       wireChunk
	scratch []byte
	// req is the request (asksUsage, read at the stream's end); finished
	// is set once choice 0 had a finish_reason, usage once a chunk carried
	// usage from then on (the finishing chunk included).
	req             *Request
	finished, usage bool
	// choice0 is set once a chunk carried choice 0, the one measured.
	choice0 bool
	// choices tracks every choice seen and whether it finished, under
	// --require-stream-completion only (strict.go).
	choices choiceSet
	// perChunk: the request asked for usage on every chunk
	// (--per-chunk-usage); chunks keeps it, decoded at the end (endUsage).
	perChunk bool
	chunks   chunkUsage
}

// endUsage is the stream's last usage under --per-chunk-usage, with its
// first content chunk's count; nil otherwise (the events carried it).
func (s *openaiStream) endUsage() *metrics.Usage { return s.chunks.usage() }

func (s *openaiStream) eofEnds() bool { return false }

// noChoice says why a stream that reached its end marker is not a reply:
// none of its chunks carried choice 0 (each had an empty choices list, as
// a usage-only chunk has), so nothing of a completion arrived; "" when one
// did. A whole reply without choice 0 fails the same way.
func (s *openaiStream) noChoice() string {
	if s.choice0 {
		return ""
	}
	return "no chunk carried a choice with index 0 (every choices list was empty or held other indices)"
}

// whole reports whether the stream read so far is a whole reply although
// data: [DONE] has not arrived: choice 0, the one measured, had its
// finish_reason, and the usage chunk the request asked for arrived with or
// after it. When it is not, why says what is missing.
func (s *openaiStream) whole() (ok bool, why string) {
	switch {
	case !s.finished:
		return false, "before choice 0's finish_reason"
	case !s.usage && s.req != nil && asksUsage(s.req):
		return false, "before the usage chunk that stream_options.include_usage asks for (choice 0 had finished)"
	}
	if i, ok := s.choices.unfinished(); ok {
		return false, fmt.Sprintf("before choice %d's finish_reason (--require-stream-completion needs one on every choice seen)", i)
	}
	return true, ""
}

func (s *openaiStream) event(name string, data []byte, status int) (piece, eventKind) {
	if name == "error" {
		return piece{err: eventError(data, status)}, kindChunk
	}
	if string(data) == "[DONE]" {
		return piece{end: true}, kindEnd
	}
	w := &s.w
	w.reset()
	decode := decodeTransient
	if s.perChunk {
		decode = decodeStreamed
	}
	if data[0] != '{' || decode(data, w, &s.scratch) != nil {
		return piece{}, kindMalformed
	}
	if e := w.failure(status); e != nil {
		return piece{err: e}, kindChunk
	}
	if w.errorObject || !w.shaped() {
		if e := flatError(w, data, status); e != nil {
			return piece{err: e}, kindChunk
		}
	}
	if !w.shaped() {
		return piece{}, kindMalformed
	}
	if why := w.shapeProblem(s.api, true); why != "" {
		return piece{why: why}, kindMalformed // another API's chunk: counted, skipped
	}
	if c := w.first(); c != nil {
		s.choice0 = true
		s.finished = s.finished || c.has&finished != 0
	}
	if s.choices.on && !s.choices.observe(w.Choices) {
		return piece{err: &metrics.Error{Code: status, Type: ErrTypeInvalidResponse,
			Message: fmt.Sprintf("the stream carried more than %d choices", 64+maxChoices)}}, kindChunk
	}
	if s.finished && w.hasUsage() {
		s.usage = true
	}
	p := piece{spec: w.specDecode()}
	p.text, p.reasoning = w.output()
	p.other, p.hasOther = w.other()
	if s.perChunk {
		s.chunks.observe(w.usageRaw, p.text != "" || p.reasoning != "")
	} else {
		p.usage = w.usage()
	}
	return p, kindChunk
}

// openaiProblem says why a body the scanner refused is not a reply: the
// first field of the wrong type, named with the type expected, when the
// body is valid JSON; else that it is not a JSON object.
func openaiProblem(b []byte) string {
	var w wireChunk
	return jsonProblem(json.Unmarshal(b, &w), "the body is not a JSON object")
}

// eventError describes an "event: error" frame: its {"error": …} object,
// an unwrapped error object (flatError), or its text.
func eventError(data []byte, status int) *metrics.Error {
	var w wireChunk
	if len(data) > 0 && data[0] == '{' && decodeChunk(data, &w) == nil {
		if e := w.failure(status); e != nil {
			return e
		}
		if e := flatError(&w, data, status); e != nil {
			return e
		}
	}
	return &metrics.Error{Code: status, Type: ErrTypeStream, Message: bodyMessage(data)}
}

// isDone reports the OpenAI end marker, which some servers of other APIs
// send too.
func isDone(data []byte) bool { return bytes.Equal(data, []byte("[DONE]")) }
