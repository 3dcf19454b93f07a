package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// cancelledMessage stands in for the message of a cancelled request that
// carries no error of its own.
const cancelledMessage = "request still in flight when the run stopped"

// jsonlMetadata is AIPerf's per-request metadata plus our extensions
// (phase, scheduled_ns, send_lag_ns, http_status, retried, malformed_chunks,
// usage_untrusted, usage_cache_dropped). An optional time that is unset (nil) is left out of the
// line, not written null: AIPerf's JSONL writers dump with exclude_none.
type jsonlMetadata struct {
	RequestNum         int    `json:"request_num"`
	SessionNum         int    `json:"session_num"`
	XRequestID         string `json:"x_request_id"`
	XCorrelationID     string `json:"x_correlation_id"`
	ConversationID     string `json:"conversation_id"`
	TurnIndex          int    `json:"turn_index"`
	CreditIssuedNs     *int64 `json:"credit_issued_ns,omitempty"`
	CreditReceivedNs   *int64 `json:"credit_received_ns,omitempty"`
	RequestStartNs     int64  `json:"request_start_ns"`
	RequestAckNs       *int64 `json:"request_ack_ns,omitempty"`
	RequestEndNs       int64  `json:"request_end_ns"`
	WorkerID           string `json:"worker_id"`
	RecordProcessorID  string `json:"record_processor_id"`
	BenchmarkPhase     string `json:"benchmark_phase"`
	WasCancelled       bool   `json:"was_cancelled"`
	CancellationTimeNs *int64 `json:"cancellation_time_ns,omitempty"`
	// ClockOffsetNs is what to subtract from these times to put them on
	// the run's clock: always 0, for every time here already is on it
	// (a worker's records are moved onto the coordinator's clock).
	ClockOffsetNs int64 `json:"clock_offset_ns"`
	// AgentDepth and ParentCorrelationID are AIPerf's DAG fields, written
	// for a dag_jsonl run's requests only.
	AgentDepth          *int   `json:"agent_depth,omitempty"`
	ParentCorrelationID string `json:"parent_correlation_id,omitempty"`

	Phase           string `json:"phase"`        // phase name (several profiling phases may run)
	ScheduledNs     int64  `json:"scheduled_ns"` // wall-clock ns the schedule wanted the send
	SendLagNs       int64  `json:"send_lag_ns"`  // sent − scheduled
	HTTPStatus      int    `json:"http_status,omitempty"`
	Retried         bool   `json:"retried"`
	MalformedChunks int    `json:"malformed_chunks"`          // stream lines that were not response chunks, skipped
	UsageUntrusted  string `json:"usage_untrusted,omitempty"` // why the server's usage was not used
	// UsageCacheDropped says why the server's prompt-cache read count was
	// dropped (the rest of its usage kept).
	UsageCacheDropped string `json:"usage_cache_dropped,omitempty"`
}

// WriteJSONL writes profile_export.jsonl: one line per profiling request
// (warmup excluded), failed and cancelled ones included with their error.
// Each line holds AIPerf's metadata, the request's metrics in display units
// ({"tag": {"value": v, "unit": u}}, in display order) and the error (no
// "error" key on success: AIPerf leaves its None fields out). Wall-clock
// fields derive from the record's WallStartNs, the wall time of its send.
func WriteJSONL(w io.Writer, run *result.Run) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var (
		b   []byte
		err error
	)
	for i := range run.Records {
		r := &run.Records[i]
		if r.PhaseKind != plan.KindProfiling {
			continue
		}
		if b, err = AppendJSONL(b[:0], r, run.Config.Streaming); err != nil {
			return fmt.Errorf("write jsonl export: %w", err)
		}
		if _, err := bw.Write(b); err != nil {
			return fmt.Errorf("write jsonl export: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write jsonl export: %w", err)
	}
	return nil
}

// AppendJSONL appends the profile_export.jsonl line of a profiling request,
// newline included: the same bytes whether the line is written while the
// run goes or after it.
func AppendJSONL(b []byte, r *metrics.Record, streaming bool) ([]byte, error) {
	md, errDetails := recordMetadata(r, streaming)
	b = append(b, `{"metadata":`...)
	b = appendMetadata(b, &md)
	b = append(b, `,"metrics":{`...)
	// Metric tags and units are plain ASCII identifiers: no escaping needed.
	for j, v := range metrics.RecordMetrics(*r, streaming) {
		if j > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, v.Tag...)
		b = append(b, `":{"value":`...)
		if v.List != nil {
			b = append(b, '[')
			for k, x := range v.List {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendFloat(b, x)
			}
			b = append(b, ']')
		} else {
			b = appendFloat(b, v.V)
		}
		b = append(b, `,"unit":"`...)
		b = append(b, v.Unit...)
		b = append(b, `"}`...)
	}
	b = append(b, '}')
	if sd := r.SpecDecode; sd != nil && r.OK() {
		var err error
		if b, err = appendSpecDecode(b, sd, r.Usage); err != nil {
			return b, fmt.Errorf("request %d: %w", r.Index, err)
		}
	}
	if r.HTTP != nil && r.HTTP.Full {
		b = append(b, `,"trace_data":`...)
		b = appendTraceData(b, r)
	}
	if errDetails != nil { // absent on success, as AIPerf's exclude_none dump
		b = append(b, `,"error":`...)
		l := newLine()
		l.value(errDetails)
		if l.err != nil {
			return b, fmt.Errorf("request %d: %w", r.Index, l.err)
		}
		b = append(b, l.buf.Bytes()...)
	}
	return append(b, "}\n"...), nil
}

// appendSpecDecode appends the request's speculative-decoding acceptance
// as AIPerf's records carry it: ,"spec_decode_acceptance":{...}, the
// histogram's keys strings in numeric order, completion_tokens the
// server's usage (when trusted).
func appendSpecDecode(b []byte, sd *metrics.SpecDecode, u *metrics.Usage) ([]byte, error) {
	o := object{{"engine", sd.Engine}, {"mean_acceptance_length", sd.MeanAcceptanceLength},
		{"draft_acceptance_rate", sd.DraftAcceptanceRate}}
	if len(sd.AcceptanceHistogram) > 0 {
		h := make(map[string]int, len(sd.AcceptanceHistogram))
		for k, n := range sd.AcceptanceHistogram {
			h[strconv.Itoa(k)] = n
		}
		o = append(o, field{"acceptance_histogram", histogramObject(h)})
	}
	o = append(o, field{"num_accepted_draft_tokens", sd.NumAcceptedDraftTokens}, field{"num_draft_tokens", sd.NumDraftTokens},
		field{"num_spec_steps", sd.NumSpecSteps})
	if sd.NumSpecTokens != nil {
		o = append(o, field{"num_spec_tokens", *sd.NumSpecTokens})
	}
	if u.Trusted() {
		o = append(o, field{"completion_tokens", u.CompletionTokens})
	}
	if sd.PerStepAccepted != nil {
		o = append(o, field{"per_step_accepted", sd.PerStepAccepted}, field{"per_step_drafted", sd.PerStepDrafted})
	}
	l := newLine()
	l.value(o)
	if l.err != nil {
		return b, l.err
	}
	b = append(b, `,"spec_decode_acceptance":`...)
	return append(b, l.buf.Bytes()...), nil
}

// workerIDs are AIPerf's names of the first worker processes.
var workerIDs = func() (ids [64]string) {
	for i := range ids {
		ids[i] = "worker_" + strconv.Itoa(i)
	}
	return ids
}()

// workerID is the worker_id of a record sent by worker i (--workers; 0 for
// a run of one process), as AIPerf names its workers.
func workerID(i int) string {
	if i >= 0 && i < len(workerIDs) {
		return workerIDs[i]
	}
	return "worker_" + strconv.Itoa(i)
}

// recordMetadata returns the JSONL metadata of one request and its error
// details (nil on success).
func recordMetadata(r *metrics.Record, streaming bool) (jsonlMetadata, *metrics.Error) {
	wall := func(ns int64) int64 { return r.WallStartNs + ns - r.SentNs }
	md := jsonlMetadata{
		RequestNum:          r.RequestNum,
		SessionNum:          r.Session,
		XRequestID:          r.RequestID,
		XCorrelationID:      r.CorrelationID,
		ConversationID:      r.Conversation,
		TurnIndex:           r.Turn,
		RequestStartNs:      r.WallStartNs,
		RequestEndNs:        wall(r.EndNs),
		WorkerID:            workerID(r.Worker),
		RecordProcessorID:   "record_processor_0",
		BenchmarkPhase:      plan.KindProfiling,
		WasCancelled:        r.Cancelled,
		Phase:               r.Phase,
		ScheduledNs:         wall(r.ScheduledNs),
		SendLagNs:           r.SentNs - r.ScheduledNs,
		HTTPStatus:          r.Status,
		Retried:             r.Retried,
		MalformedChunks:     r.MalformedChunks,
		ParentCorrelationID: r.ParentCorrelationID,
	}
	if r.DAG {
		md.AgentDepth = &r.AgentDepth
	}
	if r.Usage != nil {
		md.UsageUntrusted, md.UsageCacheDropped = r.Usage.Untrusted, r.Usage.CacheDropped
	}
	if r.IssuedNs != 0 {
		issued := wall(r.IssuedNs)
		md.CreditIssuedNs = &issued
	}
	if r.ReceivedNs != 0 {
		received := wall(r.ReceivedNs)
		md.CreditReceivedNs = &received
	}
	if streaming && r.ResponseNs.Len() > 0 {
		ack := wall(r.ResponseNs.First())
		md.RequestAckNs = &ack
	}
	errDetails := r.Error
	if r.Cancelled {
		end := md.RequestEndNs
		md.CancellationTimeNs = &end
		// AIPerf's error record of a cancellation, whatever error the cut
		// request ended with (the phase's end can cut one that then fails
		// otherwise), with our message.
		cancelled := metrics.Error{Code: metrics.CancelledCode, Type: metrics.CancelledType, Message: cancelledMessage}
		if errDetails != nil && errDetails.Message != "" {
			cancelled.Message = errDetails.Message
		}
		errDetails = &cancelled
	}
	return md, errDetails
}
