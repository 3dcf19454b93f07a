package dataset

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// captureRecord is one line of a SageMaker Data Capture file (AIPerf's
// sagemaker_data_capture): the captured request and when it was made.
type captureRecord struct {
	CaptureData *struct {
		EndpointInput *captureEntry `json:"endpointInput"`
	} `json:"captureData"`
	EventMetadata *struct {
		InferenceTime *string `json:"inferenceTime"`
	} `json:"eventMetadata"`
}

// captureEntry is a captured payload and its encoding (BASE64 unless said).
type captureEntry struct {
	Data     *string `json:"data"`
	Encoding *string `json:"encoding"`
}

// captureRequest is what a captured chat request gives a turn.
type captureRequest struct {
	Messages            json.RawMessage `json:"messages"`
	Tools               json.RawMessage `json:"tools"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
}

// The ISO 8601 forms an inferenceTime (or a TraceLab event's timestamp)
// may take, those Python's datetime.fromisoformat reads: a T or a space
// between date and time, seconds and their fraction optional, a zone as Z,
// ±hh:mm or ±hhmm, or none (UTC); a date alone; the basic form.
var captureLayouts = func() []string {
	var ls []string
	for _, sep := range []string{"T", " "} {
		for _, clock := range []string{"15:04:05.999999999", "15:04"} {
			for _, zone := range []string{"Z07:00", "Z0700", ""} {
				ls = append(ls, "2006-01-02"+sep+clock+zone)
			}
		}
	}
	return append(ls, "2006-01-02", "20060102T150405.999999999Z07:00", "20060102T150405.999999999Z0700", "20060102T150405.999999999")
}()

// decodeCapture decodes and checks a capture line as AIPerf's loader reads
// it: eventMetadata.inferenceTime (ms since the epoch), and
// captureData.endpointInput's payload (JSON or BASE64), an OpenAI chat
// request with a messages list; its max_tokens (or max_completion_tokens)
// is the output length.
func decodeCapture(line []byte) (float64, captureRequest, []problem) {
	var r captureRecord
	var req captureRequest
	if ps := decodeLine(line, &r); ps != nil {
		return 0, req, ps
	}
	var ps []problem
	ms := math.NaN()
	switch {
	case r.EventMetadata == nil || r.EventMetadata.InferenceTime == nil:
		ps = append(ps, problemf("eventMetadata.inferenceTime", "required: when the request was made (ISO 8601)"))
	default:
		if ms = parseCaptureTime(*r.EventMetadata.InferenceTime); math.IsNaN(ms) || ms < 0 || ms > MaxTimestampMs {
			ps = append(ps, problemf("eventMetadata.inferenceTime", `expected an ISO 8601 time after 1970 such as "2026-04-29T00:03:18Z", got %s`,
				brief(*r.EventMetadata.InferenceTime)))
		}
	}
	if r.CaptureData == nil || r.CaptureData.EndpointInput == nil || r.CaptureData.EndpointInput.Data == nil {
		return ms, req, append(ps, problemf("captureData.endpointInput.data", "required: the captured request (capture the endpoint's input)"))
	}
	body, p := captureBody(r.CaptureData.EndpointInput)
	if p != nil {
		return ms, req, append(ps, *p)
	}
	const field = "captureData.endpointInput.data"
	if err := json.Unmarshal(body, &req); err != nil || jsonKindOf(body) != "an object" {
		return ms, req, append(ps, problemf(field, "expected a JSON request body (an object), got %s", jsonKindOf(body)))
	}
	if !isSet(req.Messages) {
		return ms, req, append(ps, problemf(field+".messages", "required: only OpenAI-compatible chat requests (with a messages list) can be replayed"))
	}
	ps = append(ps, checkMessages(field+".messages", req.Messages)...)
	if isSet(req.Tools) && jsonKindOf(req.Tools) != "a list" {
		ps = append(ps, problemf(field+".tools", "expected a list of tool objects, got %s", jsonKindOf(req.Tools)))
	}
	if req.MaxTokens == nil {
		req.MaxTokens = req.MaxCompletionTokens
	}
	for _, p := range checkOutputLength(req.MaxTokens) {
		ps = append(ps, problemf(field+".max_tokens", "%s", p.Msg))
	}
	return ms, req, ps
}

// captureBody decodes a captured payload's text.
func captureBody(e *captureEntry) ([]byte, *problem) {
	enc := "BASE64"
	if e.Encoding != nil {
		enc = *e.Encoding
	}
	switch enc {
	case "JSON":
		return []byte(*e.Data), nil
	case "BASE64":
		b, err := base64.StdEncoding.DecodeString(*e.Data)
		if err != nil {
			p := problemf("captureData.endpointInput.data", "expected base64 (its encoding is BASE64): %v", err)
			return nil, &p
		}
		return b, nil
	}
	p := problemf("captureData.endpointInput.encoding", `expected "JSON" or "BASE64" (a chat request), got %s`, brief(enc))
	return nil, &p
}

// parseCaptureTime is an ISO 8601 time in ms since the epoch, NaN when it
// is not one.
func parseCaptureTime(s string) float64 {
	if len(s) > 10 && (s[10] == 'T' || s[10] == ' ') && (len(s) < 13 || !isDigit(s[11]) || !isDigit(s[12])) {
		return math.NaN() // a one-digit hour, which Go's layout takes and ISO 8601 does not
	}
	for _, layout := range captureLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return float64(t.Unix())*1e3 + float64(t.Nanosecond())/1e6 // UnixNano wraps outside 1678–2262
		}
	}
	return math.NaN()
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// captureStart is the earliest inferenceTime of the capture file at path
// (its valid lines'), in ms: AIPerf zero-aligns a capture's timestamps, so
// that the fixed-schedule offsets count from its first request.
func captureStart(ctx context.Context, path string) (float64, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	low := math.Inf(1)
	err = scanLines(ctx, f, func(line []byte, _ int, _ int64) bool {
		var r captureRecord
		if json.Unmarshal(line, &r) == nil && r.EventMetadata != nil && r.EventMetadata.InferenceTime != nil {
			if ms := parseCaptureTime(*r.EventMetadata.InferenceTime); ms >= 0 {
				low = min(low, ms)
			}
		}
		return true
	})
	if math.IsInf(low, 1) {
		low = 0
	}
	return low, err
}

// checkCapture is the line check of a capture file whose earliest request
// was at start (ms): each line one request, at its time after start.
func checkCapture(start float64) func([]byte) (rowInfo, []problem) {
	return func(line []byte) (rowInfo, []problem) {
		ms, _, ps := decodeCapture(line)
		if ps != nil {
			return rowInfo{}, ps
		}
		at := ms - start
		return rowInfo{turns: 1, ts: at, ts0: at, first: at, last: at, mode: modeHistory, context: MessageArrayWithResponses}, nil
	}
}

// captureTurn builds the turn of a capture line: its messages (and tools)
// sent as captured, at its time.
func (d *fileDataset) captureTurn(c *convBuilder, line []byte, row uint64) error {
	ms, req, ps := decodeCapture(line)
	if ps != nil {
		return fmt.Errorf("%s: %s", ps[0].Field, ps[0].Msg)
	}
	at := ms - d.captured
	t := Turn{MaxTokens: outputTokens(d.o, req.MaxTokens, row), Messages: bytes.Clone(req.Messages),
		InputTokens: d.countMessages(req.Messages)}
	if isSet(req.Tools) {
		t.Tools = bytes.Clone(req.Tools)
	}
	d.setTiming(&t, &at, nil)
	c.Turns = append(c.Turns, t)
	c.Mode = MessageArrayWithResponses
	return nil
}
