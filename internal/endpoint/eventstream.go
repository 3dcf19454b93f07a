package endpoint

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
)

// EventStreamType is the Content-Type of AWS's binary event stream: the
// reply of SageMaker Runtime's InvokeEndpointWithResponseStream.
const EventStreamType = "application/vnd.amazon.eventstream"

const (
	// MaxEventStreamMessage bounds one event-stream message (its total
	// length); a longer one fails the request.
	MaxEventStreamMessage = 16 << 20
	// eventPrelude is a message's total length, headers length and
	// prelude CRC; eventMinLength a message with neither headers nor
	// payload (the prelude and the message CRC).
	eventPrelude   = 12
	eventMinLength = eventPrelude + 4
	// eventBuffer is a decoder's first message buffer; it grows to the
	// longest message read.
	eventBuffer = 1 << 10
)

// errEventStream marks a reply that is not a well-formed event stream, or
// that carries an exception or error event.
var errEventStream = errors.New("sagemaker event stream")

// isEventStream reports whether h labels its body an AWS event stream:
// its media type, parameters aside. Read on every reply, it allocates
// nothing (mime.ParseMediaType would, twice).
func isEventStream(h http.Header) bool {
	ct := h.Get("Content-Type")
	if len(ct) < len(EventStreamType) || !strings.EqualFold(ct[:len(EventStreamType)], EventStreamType) {
		return false
	}
	rest := strings.TrimLeft(ct[len(EventStreamType):], " \t")
	return rest == "" || rest[0] == ';'
}

// replyBody is decodeBody's reader, unframed when it is an AWS event
// stream: the bytes its PayloadPart events carry, read as the container's
// own reply (an SSE stream), whose Content-Type (X-Amzn-SageMaker-Content-Type,
// text/event-stream when SageMaker does not name it) replaces the event
// stream's in h, so the reply is read as that.
func replyBody(h http.Header, r *tracked) (io.Reader, error) {
	in, err := decodeBody(h, r)
	if err != nil || !isEventStream(h) {
		return in, err
	}
	inner := h.Get("X-Amzn-Sagemaker-Content-Type")
	if inner == "" {
		inner = "text/event-stream"
	}
	h.Set("Content-Type", inner)
	return newEventStream(in), nil
}

// eventStream reads the payloads of an AWS event stream's PayloadPart
// events, in order, as one stream of bytes. Each message is read whole
// into one reused buffer and its CRCs checked before any of it is
// delivered; an exception or error event, a CRC mismatch, a message over
// MaxEventStreamMessage or a body that ends inside a message fails the
// read. Nothing is allocated per message once the buffer holds the
// longest one.
type eventStream struct {
	r   io.Reader
	buf []byte // the current message
	dec []byte // the current payload, base64-decoded, when it came JSON-wrapped
	esc []byte // its base64 text with "\/" unescaped, when it had any
	out []byte // what is left of the current payload to deliver
	err error  // sticky: io.EOF at the end, or why the stream failed
	// small is buf's first backing array.
	small [eventBuffer]byte
}

func newEventStream(r io.Reader) *eventStream {
	e := &eventStream{r: r}
	e.buf = e.small[:0]
	return e
}

// Read delivers the payload bytes of the PayloadPart events.
func (e *eventStream) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.err != nil {
			return 0, e.err
		}
		e.err = e.next()
	}
	n := copy(p, e.out)
	e.out = e.out[n:]
	return n, nil
}

// eventHeaders are the headers of one message this reader looks at;
// each is a view of the message buffer.
type eventHeaders struct {
	messageType, eventType, exceptionType, errorCode, errorMessage, contentType []byte
}

// next reads the next message and sets e.out to its payload when it is a
// PayloadPart event; io.EOF at a message boundary is the stream's end.
func (e *eventStream) next() error {
	b := e.buf[:eventPrelude]
	if n, err := io.ReadFull(e.r, b); err != nil {
		if errors.Is(err, io.EOF) && n == 0 {
			return io.EOF
		}
		return e.truncated(err)
	}
	total, hlen := binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])
	if got, want := crc32.ChecksumIEEE(b[:8]), binary.BigEndian.Uint32(b[8:12]); got != want {
		return fmt.Errorf("%w: a message's prelude CRC is %08x, its prelude says %08x: the stream is corrupt", errEventStream, got, want)
	}
	if total > MaxEventStreamMessage {
		return fmt.Errorf("%w: a message is %d bytes long, over the %d bytes (16 MiB) one may be", errEventStream, total, MaxEventStreamMessage)
	}
	if total < eventMinLength || hlen > total-eventMinLength {
		return fmt.Errorf("%w: a message's lengths are inconsistent (total %d bytes, headers %d bytes)", errEventStream, total, hlen)
	}
	b, err := e.readMessage(int(total))
	if err != nil {
		return e.truncated(err)
	}
	if got, want := crc32.ChecksumIEEE(b[:total-4]), binary.BigEndian.Uint32(b[total-4:]); got != want {
		return fmt.Errorf("%w: a message's CRC is %08x, the message says %08x: the stream is corrupt", errEventStream, got, want)
	}
	var h eventHeaders
	if err := parseEventHeaders(b[eventPrelude:eventPrelude+hlen], &h); err != nil {
		return err
	}
	return e.handle(&h, b[eventPrelude+hlen:total-4])
}

// readMessage reads the rest of a message of total bytes whose prelude is
// in e.buf. The buffer grows as the bytes arrive (doubling), not to what
// the prelude claims: a prelude of 16 MiB on a stream that sends nothing
// more holds no 16 MiB.
func (e *eventStream) readMessage(total int) ([]byte, error) {
	b := e.buf[:eventPrelude]
	for len(b) < total {
		if len(b) == cap(b) {
			grown := make([]byte, len(b), min(total, 2*cap(b)))
			copy(grown, b)
			b = grown
		}
		n, err := e.r.Read(b[len(b):min(cap(b), total)])
		b = b[:len(b)+n]
		if err != nil && len(b) < total {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	e.buf = b[:0]
	return b, nil
}

// truncated is the error of a body that ended, or failed, inside a
// message.
func (e *eventStream) truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the body ended inside a message: %w", errEventStream, io.ErrUnexpectedEOF)
	}
	return err
}

// handle acts on one message: a PayloadPart's payload is delivered, an
// exception or error fails the stream, and other events are skipped.
func (e *eventStream) handle(h *eventHeaders, payload []byte) error {
	switch string(h.messageType) {
	case "exception":
		return fmt.Errorf("%w: %s: %s", errEventStream, orUnnamed(h.exceptionType), exceptionMessage(payload))
	case "error":
		return fmt.Errorf("%w: error %s: %s", errEventStream, orUnnamed(h.errorCode), string(h.errorMessage))
	}
	if string(h.eventType) != "PayloadPart" {
		return nil // an event this client has no use for (SageMaker sends none other today)
	}
	if mt, _, _ := strings.Cut(string(h.contentType), ";"); strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		return e.unwrap(payload)
	}
	e.out = payload
	return nil
}

// unwrap delivers a PayloadPart whose payload is JSON, {"Bytes": base64}
// (the shape Bedrock's PayloadPart has; SageMaker's payload is the bytes
// themselves), decoding it into e.dec.
func (e *eventStream) unwrap(payload []byte) error {
	v, ok := jsonStringField(payload, `"Bytes"`)
	if !ok {
		v, ok = jsonStringField(payload, `"bytes"`)
	}
	if !ok {
		e.out = payload // JSON the container sent as it is
		return nil
	}
	if bytes.IndexByte(v, '\\') >= 0 { // an escaped '/' ("\/"), unescaped into a buffer kept for the next
		e.esc = e.esc[:0]
		for i := 0; i < len(v); i++ {
			if v[i] != '\\' || i+1 == len(v) || v[i+1] != '/' {
				e.esc = append(e.esc, v[i])
			}
		}
		v = e.esc
	}
	if cap(e.dec) < base64.StdEncoding.DecodedLen(len(v)) {
		e.dec = make([]byte, base64.StdEncoding.DecodedLen(len(v)))
	}
	n, err := base64.StdEncoding.Decode(e.dec[:cap(e.dec)], v)
	if err != nil {
		return fmt.Errorf("%w: a PayloadPart's Bytes is not base64: %w", errEventStream, err)
	}
	e.out = e.dec[:n]
	return nil
}

// jsonStringField is the raw (still escaped) value of the string member
// quotedName ("\"Bytes\"") of the JSON object b, found without decoding the
// rest.
func jsonStringField(b []byte, quotedName string) ([]byte, bool) {
	rest, ok := jsonMemberValue(b, quotedName)
	if !ok || len(rest) == 0 || rest[0] != '"' {
		return nil, false
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return nil, false
	}
	return rest[1 : 1+end], true
}

// jsonMemberValue is what follows the first member named quotedName (its
// name with its quotes) of the JSON text b: its value and the rest of b;
// false when no such member is there. It scans b; it decodes nothing.
func jsonMemberValue(b []byte, quotedName string) ([]byte, bool) {
	i := bytes.Index(b, []byte(quotedName))
	if i < 0 {
		return nil, false
	}
	rest := bytes.TrimLeft(b[i+len(quotedName):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil, false
	}
	return bytes.TrimLeft(rest[1:], " \t\r\n"), true
}

// exceptionMessage is an exception event's message: its payload's
// Message (SageMaker's ModelStreamError and InternalStreamFailure carry
// one), else the payload itself.
func exceptionMessage(payload []byte) string {
	var m struct {
		Message   string `json:"Message"`
		ErrorCode string `json:"ErrorCode"`
	}
	if json.Unmarshal(payload, &m) == nil && m.Message != "" {
		if m.ErrorCode != "" {
			return m.Message + " (" + m.ErrorCode + ")"
		}
		return m.Message
	}
	if len(payload) == 0 {
		return "no message"
	}
	return string(payload)
}

func orUnnamed(b []byte) string {
	if len(b) == 0 {
		return "unnamed"
	}
	return string(b)
}

// eventValueSizes are the fixed sizes of header values by type: bool true
// and false (0, 1) carry none, byte 1, short 2, integer 4, long 8,
// timestamp (8) 8, uuid (9) 16; -1 marks the length-prefixed byte array
// (6) and string (7).
var eventValueSizes = [10]int{0, 0, 1, 2, 4, 8, -1, -1, 8, 16}

// parseEventHeaders reads the headers of one message into h.
func parseEventHeaders(b []byte, h *eventHeaders) error {
	bad := func(what string) error {
		return fmt.Errorf("%w: a message's headers are malformed (%s)", errEventStream, what)
	}
	for len(b) > 0 {
		nlen := int(b[0])
		if len(b) < 1+nlen+1 {
			return bad("a header name runs past the headers")
		}
		name, typ := b[1:1+nlen], b[1+nlen]
		b = b[2+nlen:]
		if int(typ) >= len(eventValueSizes) {
			return bad(fmt.Sprintf("header value type %d", typ))
		}
		size := eventValueSizes[typ]
		var value []byte
		if size < 0 {
			if len(b) < 2 {
				return bad("a header value's length runs past the headers")
			}
			size = int(binary.BigEndian.Uint16(b))
			b = b[2:]
			if len(b) < size {
				return bad("a header value runs past the headers")
			}
			value = b[:size]
		} else if len(b) < size {
			return bad("a header value runs past the headers")
		}
		b = b[size:]
		switch string(name) {
		case ":message-type":
			h.messageType = value
		case ":event-type":
			h.eventType = value
		case ":exception-type":
			h.exceptionType = value
		case ":error-code":
			h.errorCode = value
		case ":error-message":
			h.errorMessage = value
		case ":content-type":
			h.contentType = value
		}
	}
	return nil
}
