package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// neutralTokens is the number of one-token content chunks of every reply of
// the neutral server.
const neutralTokens = 64

// neutralWords are the content chunks' tokens, in turn.
var neutralWords = []string{" the", " quick", " brown", " fox", " jumps", " over", " a", " lazy", " dog", "."}

// neutralChunks is the body of every streamed reply, one flushed write per
// element: a role chunk, neutralTokens content chunks, a usage chunk and
// [DONE], shaped as vLLM sends them.
func neutralChunks() [][]byte {
	const head = `data: {"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk","created":1700000000,"model":"mock-model",`
	out := [][]byte{[]byte(head + `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")}
	for i := range neutralTokens {
		finish := "null"
		if i == neutralTokens-1 {
			finish = `"length"`
		}
		out = append(out, fmt.Appendf(nil, head+`"choices":[{"index":0,"delta":{"content":%q},"logprobs":null,"finish_reason":%s}]}`+"\n\n",
			neutralWords[i%len(neutralWords)], finish))
	}
	out = append(out, []byte(head+fmt.Sprintf(`"choices":[],"usage":{"prompt_tokens":64,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n",
		64+neutralTokens, neutralTokens)))
	return append(out, []byte("data: [DONE]\n\n"))
}

// connSegments is a connection's TCP figures from the kernel (TCP_INFO):
// the segments it received and sent, and of those the ones carrying data
// (the rest are pure ACKs, window updates, SYN, FIN); unackedUS, the µs
// it had data sent but not yet acknowledged, or not yet sent
// (tcpi_busy_time); its congestion window in segments, the bytes it
// holds unsent (tcpi_notsent_bytes) and its pacing rate in bytes a second
// (tcpi_pacing_rate: enforced by bbr, which asks the kernel to pace, and
// by cubic only under the fq qdisc); and conns, 1 (sums count connections).
type connSegments struct{ in, dataIn, out, dataOut, unackedUS, cwnd, unsent, pacing, conns int64 }

func (a connSegments) plus(b connSegments) connSegments {
	return connSegments{a.in + b.in, a.dataIn + b.dataIn, a.out + b.out, a.dataOut + b.dataOut,
		a.unackedUS + b.unackedUS, a.cwnd + b.cwnd, a.unsent + b.unsent, a.pacing + b.pacing, a.conns + b.conns}
}

// serveNeutral is the -role server process of the pinned measurement: an
// SSE server with no work of its own, so that its CPU time is what its
// clients' requests cost it. Every POST has its body discarded and gets
// neutralChunks, each written and flushed as soon as the previous one was
// (itl 0: a server whose CPU bounds the load) or, after the first content
// chunk, itl after it (a server whose latency does);
// GET /count reports how many replies were completed, how many connections
// were accepted, the TCP segments its open connections received and sent
// (connSegments), and the client's turnaround: how many times a
// connection went from idle (a reply written) to active (the next request
// arriving) and the µs that took in all, then its open connections' µs
// with data unacknowledged, their windows, unsent bytes and number
// (connSegments). It serves /count on a listener
// of its own, so that asking does not count. It prints its URL and the
// control listener's on stdout and serves until its stdin ends.
func serveNeutral(itl time.Duration, cc string) error {
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	chunks := neutralChunks()
	var served atomic.Int64
	var mu sync.Mutex
	conns := map[net.Conn]time.Time{} // when each went idle (zero: it is not)
	var accepted, turns, turnUS int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for i, c := range chunks {
			if i > 1 && itl > 0 {
				time.Sleep(itl)
			}
			if _, err := w.Write(c); err != nil {
				return
			}
			f.Flush()
		}
		served.Add(1)
	})
	control := http.NewServeMux()
	control.HandleFunc("GET /count", func(w http.ResponseWriter, _ *http.Request) {
		n := served.Load()
		mu.Lock()
		var segs connSegments
		for c := range conns {
			segs = segs.plus(segmentsOf(c))
		}
		mu.Unlock()
		fmt.Fprintf(w, "%d %d %d %d %d %d %d %d %d %d %d %d %d", n, accepted, segs.in, segs.dataIn, segs.out, segs.dataOut, turns, turnUS,
			segs.unackedUS, segs.cwnd, segs.unsent, segs.pacing, segs.conns)
	})
	ln, err := listenWithCC("127.0.0.1:0", cc)
	if err != nil {
		return err
	}
	cl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(cl, control) }()
	fmt.Fprintf(os.Stdout, "http://%s\nhttp://%s\n", ln.Addr(), cl.Addr())
	srv := &http.Server{Handler: mux, ConnState: func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			conns[c] = time.Time{}
			accepted++
		case http.StateIdle:
			conns[c] = time.Now()
		case http.StateActive:
			if idle := conns[c]; !idle.IsZero() {
				turns++
				turnUS += time.Since(idle).Microseconds()
			}
			conns[c] = time.Time{}
		case http.StateHijacked, http.StateClosed:
			delete(conns, c) // its last counts are lost: connections are kept alive
		}
	}}
	return srv.Serve(ln)
}
