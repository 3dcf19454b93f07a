package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newConnTrace is a request on a new TLS connection, stamps in ns: a 5 ns
// wait, 10 ns lookup, 20 ns connect of which 12 the TLS handshake, 4 ns
// writing the request, 100 ns to the first body byte, 60 ns of body.
func newConnTrace() *HTTPTrace {
	return &HTTPTrace{GetConnNs: 1000, DNSStartNs: 1005, DNSDoneNs: 1015, ConnectStartNs: 1015, ConnectDoneNs: 1023,
		TLSStartNs: 1023, TLSDoneNs: 1035, GotConnNs: 1036, HeadersSentNs: 1038, SentNs: 1040, FirstByteNs: 1130,
		HeadersNs: 1135, BodyStartNs: 1140, BodyEndNs: 1200, BytesSent: 2048, BytesReceived: 3072, Writes: 2, Reads: 7, TLS: true}
}

// TestHTTPPhasesAddUp: k6's phases of a trace, the blocked time being what
// is left of the wait for a connection, add up to http_req_total; a reused
// connection has no lookup nor connect even when a dial it did not use
// left stamps.
func TestHTTPPhasesAddUp(t *testing.T) {
	p, ok := newConnTrace().Phases()
	require.True(t, ok)
	assert.Equal(t, Phases{Blocked: 6, DNS: 10, Connecting: 20, TLS: 12, Sending: 4, Waiting: 100, Receiving: 60,
		Duration: 164, ConnectionOverhead: 36, Total: 200}, p)

	reused := newConnTrace()
	reused.Reused = true
	p, ok = reused.Phases()
	require.True(t, ok)
	assert.Equal(t, Phases{Blocked: 36, Sending: 4, Waiting: 100, Receiving: 60, Duration: 164, ConnectionOverhead: 36,
		Total: 200}, p)

	for _, broken := range []func(*HTTPTrace){
		func(t *HTTPTrace) { t.GotConnNs = 0 },   // never connected
		func(t *HTTPTrace) { t.BodyStartNs = 0 }, // no body read
		func(t *HTTPTrace) { t.SentNs = 0 },
	} {
		tr := newConnTrace()
		broken(tr)
		_, ok := tr.Phases()
		assert.False(t, ok)
	}
}

// TestHTTPTraceMetrics: a traced request has AIPerf's http_req_* metrics in
// its display units (ms, KB of 1024 bytes, a 0/1 reuse); an untraced one,
// or a failed one, has none; the summary has their statistics.
func TestHTTPTraceMetrics(t *testing.T) {
	r := Record{SentNs: 990, EndNs: 1200, ResponseNs: StampsOf(1140, 1200), OutputTokens: 2, InputTokens: 3,
		HTTP: newConnTrace()}
	got := map[string]Value{}
	for _, v := range RecordMetrics(r, true) {
		got[v.Tag] = v
	}
	want := map[string]float64{TagHTTPBlocked: 6e-6, TagHTTPDNSLookup: 10e-6, TagHTTPConnecting: 20e-6,
		TagHTTPTLSHandshaking: 12e-6, TagHTTPSending: 4e-6, TagHTTPWaiting: 100e-6, TagHTTPReceiving: 60e-6,
		TagHTTPDuration: 164e-6, TagHTTPConnectionOverhead: 36e-6, TagHTTPTotal: 200e-6, TagHTTPDataSent: 2,
		TagHTTPDataReceived: 3, TagHTTPConnectionReused: 0, TagHTTPChunksSent: 2, TagHTTPChunksReceived: 7}
	for tag, v := range want {
		require.Contains(t, got, tag)
		assert.InDelta(t, v, got[tag].V, 1e-12, tag)
		assert.Equal(t, UnitOf(tag), got[tag].Unit)
	}
	assert.Equal(t, UnitKB, got[TagHTTPDataSent].Unit)

	plain := r
	plain.HTTP = newConnTrace()
	plain.HTTP.TLS = false
	assert.NotContains(t, tags(RecordMetrics(plain, true)), TagHTTPTLSHandshaking, "no TLS, no handshake metric")
	plain.HTTP = nil
	for _, tag := range tags(RecordMetrics(plain, true)) {
		assert.NotContains(t, tag, "http_req_")
	}
	failed := r
	failed.Error = &Error{Type: "HTTPError", Code: 500}
	assert.Equal(t, []string{TagErrorISL}, tags(RecordMetrics(failed, true)))

	s := Summarize([]Record{r, plain}, true)
	m, ok := s.Get(TagHTTPTotal)
	require.True(t, ok)
	assert.Equal(t, 1, m.Stats.Count, "the traced request only")
	assert.Equal(t, GroupHTTPTrace, GroupOf(TagHTTPWaiting))
	assert.Equal(t, GroupNone, GroupOf(TagHTTPChunksReceived), "exported, not shown, as AIPerf")
}

// TestHTTPTraceShifts: a worker's trace moves onto the coordinator's clock
// with its record.
func TestHTTPTraceShifts(t *testing.T) {
	r := Record{SentNs: 990, HTTP: newConnTrace()}
	r.HTTP.Reused, r.HTTP.DNSStartNs, r.HTTP.DNSDoneNs = true, 0, 0
	r.HTTP.ResponseChunks = [][2]int64{{1140, 10}}
	before, _ := r.HTTP.Phases()
	r.Shift(1_000_000)
	after, _ := r.HTTP.Phases()
	assert.Equal(t, before, after)
	assert.Equal(t, int64(1_001_000), r.HTTP.GetConnNs)
	assert.Zero(t, r.HTTP.DNSStartNs, "an event that did not happen stays unset")
	assert.Equal(t, [2]int64{1_001_140, 10}, r.HTTP.ResponseChunks[0])
}

func tags(vs []Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Tag
	}
	return out
}
