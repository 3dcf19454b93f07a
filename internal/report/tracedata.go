package report

import (
	"net"
	"net/http"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// TraceType is trace_data's trace_type: the HTTP client whose events the
// trace holds (AIPerf writes "aiohttp").
const TraceType = "httptrace"

// appendTraceData appends a request's HTTP trace as AIPerf's trace_data
// (http-trace-metrics.md, --export-http-trace): a JSON object with
// wall-clock timestamps (ns since the epoch), each read and write of the
// connection as [timestamp, bytes], the computed durations and the
// connection's ends. A field whose event did not happen is left out, as
// AIPerf does. The request and response headers are not written: they may
// carry credentials. tls_handshake_start_ns and tls_handshake_end_ns are
// ours (AIPerf counts the handshake in the TCP connect).
func appendTraceData(b []byte, r *metrics.Record) []byte {
	t := r.HTTP
	wall := func(ns int64) int64 { return r.WallStartNs + ns - r.SentNs }
	b = append(b, `{"trace_type":`...)
	b = appendString(b, TraceType)
	stamp := func(key string, ns int64) {
		if ns != 0 {
			b = appendKey(b, key)
			b = strconv.AppendInt(b, wall(ns), 10)
		}
	}
	num := func(key string, v int64) {
		b = appendKey(b, key)
		b = strconv.AppendInt(b, v, 10)
	}
	chunks := func(key string, list [][2]int64) {
		b = appendKey(b, key)
		b = append(b, '[')
		for i, c := range list {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = strconv.AppendInt(b, wall(c[0]), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, c[1], 10)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	stamp("request_send_start_ns", t.GotConnNs)
	stamp("request_headers_sent_ns", t.HeadersSentNs)
	chunks("request_chunks", t.RequestChunks)
	stamp("request_send_end_ns", t.SentNs)
	num("request_chunks_count", int64(t.Writes))
	num("request_bytes_total", t.BytesSent)
	if r.Status != 0 {
		num("response_status_code", int64(r.Status))
		b = appendKey(b, "response_reason")
		b = appendString(b, http.StatusText(r.Status))
	}
	stamp("response_receive_start_ns", t.BodyStartNs)
	stamp("response_first_byte_ns", t.FirstByteNs)
	stamp("response_headers_received_ns", t.HeadersNs)
	chunks("response_chunks", t.ResponseChunks)
	num("response_chunks_count", int64(t.Reads))
	num("response_bytes_total", t.BytesReceived)
	stamp("response_receive_end_ns", t.BodyEndNs)
	if r.Error != nil {
		stamp("error_timestamp_ns", r.EndNs)
	}
	stamp("connection_pool_wait_start_ns", t.GetConnNs)
	stamp("connection_pool_wait_end_ns", t.GotConnNs)
	if !t.Reused {
		stamp("dns_lookup_start_ns", t.DNSStartNs)
		stamp("dns_lookup_end_ns", t.DNSDoneNs)
		stamp("tcp_connect_start_ns", t.ConnectStartNs)
		stamp("tcp_connect_end_ns", max(t.ConnectDoneNs, t.TLSDoneNs))
		stamp("tls_handshake_start_ns", t.TLSStartNs)
		stamp("tls_handshake_end_ns", t.TLSDoneNs)
	} else {
		stamp("connection_reused_ns", t.GotConnNs)
	}
	if p, ok := t.Phases(); ok {
		num("sending_ns", p.Sending)
		num("waiting_ns", p.Waiting)
		num("receiving_ns", p.Receiving)
		num("duration_ns", p.Duration)
		if p.Blocked > 0 {
			num("blocked_ns", p.Blocked)
		}
		if t.DNSStartNs != 0 && !t.Reused {
			num("dns_lookup_ns", p.DNS)
		}
		if t.ConnectStartNs != 0 && !t.Reused {
			num("connecting_ns", p.Connecting)
		}
	}
	b = appendAddr(b, "local", t.LocalAddr)
	b = appendAddr(b, "remote", t.RemoteAddr)
	return append(b, '}')
}

// appendKey appends ,"key": (keys are plain ASCII: no escaping).
func appendKey(b []byte, key string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// appendAddr appends an address as AIPerf's <end>_ip and <end>_port.
func appendAddr(b []byte, end, addr string) []byte {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return b
	}
	b = appendKey(b, end+"_ip")
	b = appendString(b, host)
	if p, err := strconv.Atoi(port); err == nil {
		b = appendKey(b, end+"_port")
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return b
}
