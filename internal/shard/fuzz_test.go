package shard

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// fuzzLimit is the channel's line limit under fuzzing: small, so that
// the fuzzer reaches it.
const fuzzLimit = 4 << 10

// FuzzWorkerChannel feeds hostile bytes to the coordinator's reader of one
// worker, as a worker (or whoever reached its channel) could send them,
// through the phase under way: it must never panic nor hold more than the
// line limit, and every record it merges must be a possible one, on the
// coordinator's timebase, numbered as worker 1 of 2.
func FuzzWorkerChannel(f *testing.F) {
	rec := metrics.Record{Index: 2, Phase: "profiling", PhaseKind: plan.KindProfiling, ScheduledNs: 10, SentNs: 20, EndNs: 90,
		ResponseNs: metrics.StampsOf(30, 40, 80), FirstOutputNs: 30, Status: 200, InputTokens: 16, OutputTokens: 3,
		Usage: &metrics.Usage{PromptTokens: 16, CompletionTokens: 3, TotalTokens: new(19)}}
	var seed bytes.Buffer
	conn := NewConn(nil, &seed)
	for _, m := range []*Msg{{Type: TypeHello, Start: 1}, {Type: TypePong, T0: 1, TW: 2}, {Type: TypeReady, Phase: "profiling"},
		{Type: TypeBeat}, {Type: TypeRecord, Record: &rec}, {Type: TypeProgress, Phase: "profiling", Sent: 5},
		{Type: TypeDrained, Phase: "profiling"}, {Type: TypeDone, Done: &Done{StallP99: 3}}, {Type: TypeError, Err: "boom"}} {
		_ = conn.Send(m)
	}
	f.Add(seed.Bytes())
	f.Add([]byte(`{"t":"rec","rec":{"phase":"profiling","phase_kind":"profiling","sent_ns":50,"end_ns":10}}` + "\n"))
	f.Add([]byte(`{"t":"rec","rec":{"phase":"warmup","phase_kind":"warmup","sent_ns":1,"end_ns":2}}` + "\n"))
	f.Add([]byte(`{"t":"rec","rec":{"phase":"profiling","phase_kind":"profiling","index":-1,"response_ns":[5,3,1]}}` + "\n"))
	f.Add([]byte(`{"t":"rec","rec":{"phase":"profiling","phase_kind":"profiling","usage":{"prompt_tokens":-9}}}` + "\n"))
	f.Add([]byte(`{"t":"progress","phase":"` + strings.Repeat("x", fuzzLimit) + `"}` + "\n"))
	f.Add([]byte("{\"t\":\"rec\",\"rec\":{\"response_ns\":[1e308]}}\n{\"t\":\"beat\"}{\"t\":\"beat\"}\n\xff\xfe\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var merged []metrics.Record
		var mu sync.Mutex
		c := &Coordinator{Clock: load.NewClock(), URLs: 2, OnRecord: func(r metrics.Record) {
			mu.Lock()
			merged = append(merged, r)
			mu.Unlock()
		}}
		c.Peers = []*Peer{{Name: "worker 0"}, {Name: "worker 1", Conn: NewConn(bytes.NewReader(data), io.Discard).Limit(fuzzLimit),
			Wait: func() error { return nil }, Kill: func() {}}}
		phases := []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling}}
		c.setup(phases, nil)
		c.startNs[0].Store(1)
		c.peers[1].slack.Store(1000)
		events := make(chan event, 1<<16)
		c.read(1, c.Peers[1], events) // returns at the end of data
		for _, m := range merged {
			if m.Worker != 1 || m.Index%2 != 1 || m.Session%2 != 1 {
				t.Fatalf("a merged record not numbered as worker 1's: %+v", m)
			}
			if m.EndNs < m.SentNs || m.SentNs < 1-1000 || m.Index < 0 {
				t.Fatalf("an impossible record was merged: %+v", m)
			}
			if m.ResponseNs.Len() > 0 && (m.ResponseNs.First() < m.SentNs || m.ResponseNs.Last() > m.EndNs) {
				t.Fatalf("a record's responses outside it were merged: %+v", m)
			}
		}
		var last event
		for len(events) > 0 {
			last = <-events
		}
		if !last.eof {
			t.Fatalf("the reader returned before its channel's end")
		}
	})
}
