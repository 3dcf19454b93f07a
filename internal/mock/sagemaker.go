package mock

import (
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"strings"
)

// SageMaker Runtime's routes, as this server fakes them: a SageMaker
// endpoint whose container serves chat completions. InvokeEndpoint
// (/invocations) answers with the container's own reply;
// InvokeEndpointWithResponseStream (/invocations-response-stream) wraps
// the container's SSE stream in AWS's binary event stream, as PayloadPart
// events that split SSE lines at arbitrary points.
const (
	sageMakerInvoke = "POST /endpoints/{name}/invocations"
	sageMakerStream = "POST /endpoints/{name}/invocations-response-stream"
)

// eventStreamType is the Content-Type of AWS's event stream.
const eventStreamType = "application/vnd.amazon.eventstream"

// sageMakerPieces are the sizes the stream's payload parts cycle through:
// several SSE bytes each, cutting lines anywhere.
var sageMakerPieces = []int{7, 31, 3, 64, 17}

// sageMakerRoutes registers SageMaker Runtime's two invocation routes, each
// treating its body as a chat completions request.
func (s *Server) sageMakerRoutes(mux *http.ServeMux) {
	chat := s.inference(chatEndpoint)
	mux.HandleFunc(sageMakerInvoke, chat)
	mux.HandleFunc(sageMakerStream, func(w http.ResponseWriter, r *http.Request) {
		ew := &eventStreamWriter{w: w, header: http.Header{}}
		chat(ew, r)
		if ew.status == 0 {
			ew.WriteHeader(http.StatusOK)
		}
		_ = ew.FlushError()
	})
}

// eventStreamWriter passes a handler's reply through as SageMaker would:
// a 200 text/event-stream reply as event-stream PayloadPart messages (one
// batch per flush, so each token still leaves when it is due), anything
// else (an error) as it is.
type eventStreamWriter struct {
	w       http.ResponseWriter
	header  http.Header // the handler's
	status  int
	framed  bool   // the reply is being framed
	pending []byte // written, not yet framed
	piece   int    // the next index into sageMakerPieces
	out     []byte // framing scratch
}

func (e *eventStreamWriter) Header() http.Header { return e.header }

func (e *eventStreamWriter) WriteHeader(status int) {
	if e.status != 0 {
		return
	}
	e.status = status
	ct := e.header.Get("Content-Type")
	e.framed = status == http.StatusOK && strings.HasPrefix(ct, "text/event-stream")
	h := e.w.Header()
	if !e.framed {
		for k, v := range e.header {
			h[k] = v
		}
		e.w.WriteHeader(status)
		return
	}
	h.Set("Content-Type", eventStreamType)
	h.Set("X-Amzn-SageMaker-Content-Type", ct)
	e.w.WriteHeader(status)
}

func (e *eventStreamWriter) Write(p []byte) (int, error) {
	if e.status == 0 {
		e.WriteHeader(http.StatusOK)
	}
	if !e.framed {
		return e.w.Write(p)
	}
	e.pending = append(e.pending, p...)
	return len(p), nil
}

// FlushError frames what was written since the last flush as PayloadPart
// messages and flushes them.
func (e *eventStreamWriter) FlushError() error {
	if e.framed && len(e.pending) > 0 {
		e.out = e.out[:0]
		for p := e.pending; len(p) > 0; {
			n := min(sageMakerPieces[e.piece%len(sageMakerPieces)], len(p))
			e.piece++
			e.out = AppendEventMessage(e.out, [][2]string{
				{":event-type", "PayloadPart"}, {":content-type", "application/octet-stream"}, {":message-type", "event"},
			}, p[:n])
			p = p[n:]
		}
		e.pending = e.pending[:0]
		if _, err := e.w.Write(e.out); err != nil {
			return err
		}
	}
	return http.NewResponseController(e.w).Flush()
}

// Unwrap exposes the connection's writer to http.ResponseController (its
// deadlines).
func (e *eventStreamWriter) Unwrap() http.ResponseWriter { return e.w }

// AppendEventMessage appends to dst one message of AWS's binary event
// stream: its prelude (total length, headers length, prelude CRC32), its
// string-valued headers (name, value pairs), payload and message CRC32.
func AppendEventMessage(dst []byte, headers [][2]string, payload []byte) []byte {
	hlen := 0
	for _, kv := range headers {
		hlen += 1 + len(kv[0]) + 1 + 2 + len(kv[1])
	}
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, uint32(12+hlen+len(payload)+4))
	dst = binary.BigEndian.AppendUint32(dst, uint32(hlen))
	dst = binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:start+8]))
	for _, kv := range headers {
		dst = append(dst, byte(len(kv[0])))
		dst = append(dst, kv[0]...)
		dst = append(dst, 7) // a string
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(kv[1])))
		dst = append(dst, kv[1]...)
	}
	dst = append(dst, payload...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}
