package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// RawJSONLFile is AIPerf's raw export: request and response payloads.
const RawJSONLFile = "profile_export_raw.jsonl"

// rawPacket is one field of an SSE message, as AIPerf's raw export writes it.
type rawPacket struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// rawResponse is one response of AIPerf's raw export: an SSE message (its
// packets) or a whole body (its text), with its arrival time (perf_ns, the
// run's monotonic clock).
type rawResponse struct {
	PerfNs  int64       `json:"perf_ns"`
	Packets []rawPacket `json:"packets,omitempty"`
	Text    *string     `json:"text,omitempty"`
}

// WriteRawJSONL writes profile_export_raw.jsonl (--export-level raw): a line
// per profiling request in AIPerf's RawRecordInfo shape: metadata as in
// profile_export.jsonl, start_perf_ns, the payload sent (the JSON body; a
// body that is not JSON as a string), status, every response as read and
// the error (and trace_data with --export-http-trace, as
// profile_export.jsonl). Headers are not written. The run's secrets were redacted from
// payloads and responses by result.Run.Redacted.
func WriteRawJSONL(w io.Writer, run *result.Run) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range run.Records {
		r := &run.Records[i]
		if r.PhaseKind != plan.KindProfiling || r.Raw == nil {
			continue
		}
		if err := enc.Encode(rawLine(r, run.Config.Streaming)); err != nil {
			return fmt.Errorf("write raw export: request %d: %w", r.Index, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write raw export: %w", err)
	}
	return nil
}

// rawLine is a request's line of the raw export.
func rawLine(r *metrics.Record, streaming bool) object {
	md, errDetails := recordMetadata(r, streaming)
	var payload any = json.RawMessage(r.Raw.Payload)
	if !json.Valid(r.Raw.Payload) {
		payload = string(r.Raw.Payload)
	}
	responses := make([]rawResponse, len(r.Raw.Responses))
	for i, x := range r.Raw.Responses {
		responses[i].PerfNs = x.At
		if x.Whole {
			text := string(x.Data)
			responses[i].Text = &text
			continue
		}
		if x.Event != "" {
			responses[i].Packets = append(responses[i].Packets, rawPacket{"event", x.Event})
		}
		responses[i].Packets = append(responses[i].Packets, rawPacket{"data", string(x.Data)})
	}
	// None is left out, as AIPerf's exclude_none dump: no status without a
	// response, no error on success.
	line := object{{"metadata", md}, {"start_perf_ns", r.SentNs}, {"payload", payload}}
	if r.Status != 0 {
		line = append(line, field{"status", r.Status})
	}
	line = append(line, field{"responses", responses})
	if r.HTTP != nil && r.HTTP.Full { // --export-http-trace
		line = append(line, field{"trace_data", json.RawMessage(appendTraceData(nil, r))})
	}
	if errDetails != nil {
		line = append(line, field{"error", errDetails})
	}
	return line
}
