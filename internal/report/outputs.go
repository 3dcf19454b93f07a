package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// OutputsFile is outputs.json's name (NAME_outputs.json under
// --profile-export-prefix NAME).
const OutputsFile = "outputs.json"

// outputsSchema is AIPerf's OutputsJsonExporter.SCHEMA_VERSION.
const outputsSchema = "1.1"

// outputMetrics are the record metrics outputs.json carries, in display
// units (AIPerf's allowlist); a streaming-only one is absent from a
// non-streaming record.
var outputMetrics = []string{metrics.TagISL, metrics.TagOutputTokenCount, metrics.TagOSL, metrics.TagRequestLatency,
	metrics.TagTTFT, metrics.TagITL}

// outputEntry is one request of outputs.json.
type outputEntry struct {
	SessionNum     int                `json:"session_num"`
	ConversationID string             `json:"conversation_id"`
	TurnIndex      int                `json:"turn_index"`
	XRequestID     string             `json:"x_request_id"`
	BenchmarkPhase string             `json:"benchmark_phase"`
	RequestStartNs int64              `json:"request_start_ns"`
	RequestEndNs   int64              `json:"request_end_ns"`
	Metrics        map[string]float64 `json:"metrics"`
	ResponseText   *string            `json:"response_text"`
}

// WriteOutputsJSON writes AIPerf's outputs.json (--export-outputs-json):
// {"schema_version", "data": the profiling requests, "warmup": the warmup's},
// each sorted by session and turn, with the generated text (reasoning then
// content; null when the reply had none).
func WriteOutputsJSON(w io.Writer, run *result.Run) error {
	doc := struct {
		SchemaVersion string        `json:"schema_version"`
		Data          []outputEntry `json:"data"`
		Warmup        []outputEntry `json:"warmup"`
	}{SchemaVersion: outputsSchema, Data: []outputEntry{}, Warmup: []outputEntry{}}
	for i := range run.Records {
		r := &run.Records[i]
		e := outputEntry{SessionNum: r.Session, ConversationID: r.Conversation, TurnIndex: r.Turn, XRequestID: r.RequestID,
			BenchmarkPhase: r.PhaseKind, RequestStartNs: r.WallStartNs, RequestEndNs: r.WallStartNs + r.EndNs - r.SentNs,
			Metrics: map[string]float64{}, ResponseText: r.ResponseText}
		for _, v := range metrics.RecordMetrics(*r, run.Config.Streaming) {
			if v.List == nil && slices.Contains(outputMetrics, v.Tag) {
				e.Metrics[v.Tag] = v.V
			}
		}
		if r.PhaseKind == plan.KindWarmup {
			doc.Warmup = append(doc.Warmup, e)
		} else {
			doc.Data = append(doc.Data, e)
		}
	}
	for _, list := range [][]outputEntry{doc.Data, doc.Warmup} {
		slices.SortStableFunc(list, func(a, b outputEntry) int {
			return cmp.Or(cmp.Compare(a.SessionNum, b.SessionNum), cmp.Compare(a.TurnIndex, b.TurnIndex))
		})
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := JSON(bw, doc); err != nil {
		return fmt.Errorf("write outputs.json: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write outputs.json: %w", err)
	}
	return nil
}
