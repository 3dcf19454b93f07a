package metrics

// AIPerf's HTTP trace metrics (docs/tutorials/http-trace-metrics.md, k6's
// names), from a request's HTTPTrace; http_req_tls_handshaking (k6's name)
// is ours: AIPerf folds the TLS handshake into http_req_connecting, as this
// package does too.
const (
	TagHTTPBlocked            = "http_req_blocked"
	TagHTTPDNSLookup          = "http_req_dns_lookup"
	TagHTTPConnecting         = "http_req_connecting"
	TagHTTPTLSHandshaking     = "http_req_tls_handshaking"
	TagHTTPSending            = "http_req_sending"
	TagHTTPWaiting            = "http_req_waiting"
	TagHTTPReceiving          = "http_req_receiving"
	TagHTTPDuration           = "http_req_duration"
	TagHTTPConnectionOverhead = "http_req_connection_overhead"
	TagHTTPTotal              = "http_req_total"
	TagHTTPDataSent           = "http_req_data_sent"
	TagHTTPDataReceived       = "http_req_data_received"
	TagHTTPConnectionReused   = "http_req_connection_reused"
	TagHTTPChunksSent         = "http_req_chunks_sent"
	TagHTTPChunksReceived     = "http_req_chunks_received"

	// UnitKB is AIPerf's display unit of the data sizes: 1024 bytes.
	UnitKB = "KB"
)

// HTTPTrace is one request's HTTP exchange as net/http/httptrace and the
// connection saw it (--show-trace-timing, --export-http-trace). Stamps are
// on the run's monotonic clock (ns from its start, as Record's); 0 means
// the event did not happen. The byte and read/write counts are the
// transport's: headers and body, TLS records when the connection is TLS.
type HTTPTrace struct {
	GetConnNs      int64 `json:"get_conn_ns"`                // began to get a connection
	DNSStartNs     int64 `json:"dns_start_ns,omitempty"`     // a new connection's name lookup
	DNSDoneNs      int64 `json:"dns_done_ns,omitempty"`      //
	ConnectStartNs int64 `json:"connect_start_ns,omitempty"` // its first dial
	ConnectDoneNs  int64 `json:"connect_done_ns,omitempty"`  // its last successful dial
	TLSStartNs     int64 `json:"tls_start_ns,omitempty"`     // its TLS handshake
	TLSDoneNs      int64 `json:"tls_done_ns,omitempty"`      //
	GotConnNs      int64 `json:"got_conn_ns"`                // the connection to send on: the request starts being sent
	Reused         bool  `json:"reused,omitempty"`           // it came from the idle pool
	HeadersSentNs  int64 `json:"headers_sent_ns,omitempty"`  // the request's headers written
	SentNs         int64 `json:"sent_ns,omitempty"`          // the whole request written
	FirstByteNs    int64 `json:"first_byte_ns,omitempty"`    // the response's first byte (its status line)
	HeadersNs      int64 `json:"headers_ns,omitempty"`       // the response's headers read
	BodyStartNs    int64 `json:"body_start_ns,omitempty"`    // the first read of the body that returned data
	BodyEndNs      int64 `json:"body_end_ns,omitempty"`      // the last, before the response ended
	BytesSent      int64 `json:"bytes_sent"`
	BytesReceived  int64 `json:"bytes_received"`
	Writes         int   `json:"writes"` // the connection's write calls that sent the request
	Reads          int   `json:"reads"`  // its read calls that returned the response
	TLS            bool  `json:"tls,omitempty"`

	// Kept with --export-http-trace only (Full), for AIPerf's trace_data:
	// each write and read as [stamp, bytes], and the connection's ends.
	Full           bool       `json:"full,omitempty"`
	RequestChunks  [][2]int64 `json:"request_chunks,omitempty"`
	ResponseChunks [][2]int64 `json:"response_chunks,omitempty"`
	LocalAddr      string     `json:"local_addr,omitempty"`
	RemoteAddr     string     `json:"remote_addr,omitempty"`
}

// Phases are an HTTPTrace's durations in ns, k6's and AIPerf's: Blocked +
// DNS + Connecting + Sending + Waiting + Receiving = Total, which runs from
// GetConn to the body's last read; Duration is the exchange, from GotConn to
// the body's last read (Sending + Waiting + Receiving).
type Phases struct {
	Blocked, DNS, Connecting, TLS       int64
	Sending, Waiting, Receiving         int64
	Duration, ConnectionOverhead, Total int64
}

// Phases returns the trace's durations, and false for a trace without the
// stamps they need (no connection, or no body read).
func (t *HTTPTrace) Phases() (Phases, bool) {
	if t == nil || t.GetConnNs == 0 || t.GotConnNs == 0 || t.SentNs == 0 || t.BodyStartNs == 0 {
		return Phases{}, false
	}
	var p Phases
	if !t.Reused { // a reused connection looked nothing up and dialled nothing
		if t.DNSStartNs != 0 && t.DNSDoneNs >= t.DNSStartNs {
			p.DNS = t.DNSDoneNs - t.DNSStartNs
		}
		if t.ConnectStartNs != 0 {
			p.Connecting = max(0, max(t.ConnectDoneNs, t.TLSDoneNs)-t.ConnectStartNs)
		}
		if t.TLSStartNs != 0 && t.TLSDoneNs >= t.TLSStartNs {
			p.TLS = t.TLSDoneNs - t.TLSStartNs
		}
	}
	// Blocked is the rest of the wait for a connection: the pool's queue,
	// and a dial's setup besides its lookup and connect.
	p.Blocked = max(0, t.GotConnNs-t.GetConnNs-p.DNS-p.Connecting)
	p.Sending = max(0, t.SentNs-t.GotConnNs)
	p.Waiting = max(0, t.BodyStartNs-t.SentNs)
	p.Receiving = max(0, t.BodyEndNs-t.BodyStartNs)
	p.Duration = p.Sending + p.Waiting + p.Receiving
	p.ConnectionOverhead = p.Blocked + p.DNS + p.Connecting
	p.Total = p.ConnectionOverhead + p.Duration
	return p, true
}

// Shift moves every stamp by d ns (Record.Shift).
func (t *HTTPTrace) Shift(d int64) {
	for _, s := range []*int64{&t.GetConnNs, &t.DNSStartNs, &t.DNSDoneNs, &t.ConnectStartNs, &t.ConnectDoneNs,
		&t.TLSStartNs, &t.TLSDoneNs, &t.GotConnNs, &t.HeadersSentNs, &t.SentNs, &t.FirstByteNs, &t.HeadersNs,
		&t.BodyStartNs, &t.BodyEndNs} {
		if *s != 0 {
			*s += d
		}
	}
	for _, chunks := range [][][2]int64{t.RequestChunks, t.ResponseChunks} {
		for i := range chunks {
			chunks[i][0] += d
		}
	}
}

// visitHTTP emits a successful request's HTTP trace metrics.
func visitHTTP(t *HTTPTrace, emit func(id int, v float64)) {
	p, ok := t.Phases()
	if !ok {
		return
	}
	emit(idHTTPBlocked, ms(p.Blocked))
	emit(idHTTPDNS, ms(p.DNS))
	emit(idHTTPConnecting, ms(p.Connecting))
	if t.TLS {
		emit(idHTTPTLS, ms(p.TLS))
	}
	emit(idHTTPSending, ms(p.Sending))
	emit(idHTTPWaiting, ms(p.Waiting))
	emit(idHTTPReceiving, ms(p.Receiving))
	emit(idHTTPDuration, ms(p.Duration))
	emit(idHTTPOverhead, ms(p.ConnectionOverhead))
	emit(idHTTPTotal, ms(p.Total))
	emit(idHTTPDataSent, float64(t.BytesSent)/1024)
	emit(idHTTPDataReceived, float64(t.BytesReceived)/1024)
	reused := 0.0
	if t.Reused {
		reused = 1
	}
	emit(idHTTPReused, reused)
	emit(idHTTPChunksSent, float64(t.Writes))
	emit(idHTTPChunksReceived, float64(t.Reads))
}
