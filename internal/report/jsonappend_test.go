package report

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// marshal is encoding/json's output with HTML escaping off, as the line
// encoder writes it.
func marshal(t testing.TB, v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func TestAppendersMatchEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.1, 1e-6, 9.99e-7, 1e-9, 123456.789, 1e20, 1e21, 1.5e300, -2.5e-8, math.SmallestNonzeroFloat64} {
		assert.Equal(t, marshal(t, f), string(appendFloat(nil, f)), "%g", f)
	}
	for _, s := range []string{"", "plain", `q"uote\back`, "ctl\x00\x01\x1f\n\r\t", "<&>", "é漢字", "bad\xff\xfeutf8", "\u2028\u2029", "\x7f"} {
		assert.Equal(t, marshal(t, s), string(appendString(nil, s)), "%q", s)
	}
	ack, cut, depth, root := int64(5), int64(9), 2, 0
	for _, md := range []jsonlMetadata{
		{},
		{AgentDepth: &root},
		{AgentDepth: &depth, ParentCorrelationID: "p\"arent"}, // a DAG branch's
		{SessionNum: 3, XRequestID: "r\"1", XCorrelationID: "c", ConversationID: "conv\n", TurnIndex: 2, RequestStartNs: 1,
			RequestAckNs: &ack, RequestEndNs: 7, WorkerID: "w", RecordProcessorID: "p", BenchmarkPhase: "profiling",
			WasCancelled: true, CancellationTimeNs: &cut, Phase: "profiling", ScheduledNs: -4, SendLagNs: 2, HTTPStatus: 200,
			Retried: true, MalformedChunks: 1, UsageUntrusted: "negative", UsageCacheDropped: "1000 cached tokens, more than the 16 prompt tokens"},
	} {
		assert.Equal(t, marshal(t, md), string(appendMetadata(nil, &md)))
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a\"b\\c\x00\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendString(nil, s)), marshal(t, s); got != want {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
