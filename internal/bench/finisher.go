package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/aiperf-go/aiperf/internal/chattemplate"
	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// finisher completes each record while the load runs, on one goroutine,
// in the order the requests ended, off the path of any request: it counts
// the response's tokens with the client's tokenizer, adds the replies a
// turn re-sent to its input length (the earlier turns of a session ended,
// and were finished, before it was sent), stamps the wall-clock send,
// checks the server's usage and, when asked, writes the request's line of
// profile_export.jsonl. The requests' text is held only until it is
// counted, and little is left to do when the load ends.
type finisher struct {
	tok       tokenizer.Tokenizer
	clock     load.Clock
	streaming bool
	jsonl     *jsonlSink // nil: the export is written after the run
	store     RecordSink // nil: the records are stored after the run
	watch     Watcher    // nil: none
	// server takes ISL and the output counts from the server's usage
	// (--use-server-token-count) when it is plausible beside the client's
	// own counts, which the tokenizer still makes (finish).
	server bool
	// merged records come finished from the workers of a sharded cell:
	// only their wall-clock stamp and their usage's check are this
	// process's to do.
	merged bool
	// batch is how many finished records wait before they go to the store
	// (storeBatch; a worker streams each record as it is finished: 1).
	batch int
	// chat, when set, counts the ISL of each request carrying chat
	// messages through the model's chat template (--apply-chat-template).
	chat *chattemplate.Template
	// outputs keeps each response's text on its record
	// (--export-outputs-json: outputs.json).
	outputs bool

	mu     sync.Mutex
	queue  []metrics.Record   // ended, not finished yet
	texts  map[int]outputText // by Record.Index, until counted
	wake   chan struct{}      // cap 1: the queue grew or closed
	closed bool               // no record is pushed after it
	stop   atomic.Bool        // interrupted: finish without counting
	done   chan struct{}      // the goroutine has finished everything
	pushed atomic.Int64       // records pushed
	missed atomic.Int64       // responses left uncounted
	state  finisherState      // the goroutine's own
	once   sync.Once
}

// outputText is what a request leaves to count: its response's text and
// reasoning and, to count its ISL through the chat template, the request.
type outputText struct {
	text, reasoning string
	req             *endpoint.Request
}

// finisherState is what only the finishing goroutine touches.
type finisherState struct {
	records []metrics.Record
	stored  int                 // records[:stored] went to the store
	err     error               // the store's first failure
	replies map[int][]turnReply // session → its successful replies so far
	// bare counts the requests whose conversation the chat template did
	// not render (their ISL is the bare count); bareErr is the first's error.
	bare    int
	bareErr error
	// noOSL counts the replies left uncounted that no trusted usage gives
	// an OSL either: their OSL is unknown (metrics.OSLKnown).
	noOSL int
}

type turnReply struct{ turn, tokens int }

func newFinisher(tok tokenizer.Tokenizer, clock load.Clock, streaming, server bool, jsonl *jsonlSink, store RecordSink,
	expected int) *finisher {
	f := &finisher{tok: tok, clock: clock, streaming: streaming, server: server, jsonl: jsonl, store: store,
		texts: map[int]outputText{}, batch: storeBatch,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		state: finisherState{records: make([]metrics.Record, 0, expected), replies: map[int][]turnReply{}}}
	go f.run()
	return f
}

// text keeps a response's text, and the request when its ISL is counted
// through the chat template (req nil: not), until its record is finished;
// the request calls it before its record is pushed.
func (f *finisher) text(index int, text, reasoning string, req *endpoint.Request) {
	if text == "" && reasoning == "" && req == nil {
		return
	}
	f.mu.Lock()
	f.texts[index] = outputText{text, reasoning, req}
	f.mu.Unlock()
}

// push queues an ended request's record. It never blocks.
func (f *finisher) push(r metrics.Record) {
	f.mu.Lock()
	f.queue = append(f.queue, r)
	f.mu.Unlock()
	f.pushed.Add(1)
	f.signal()
}

func (f *finisher) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// close says no record comes after; Run calls it on every way out.
func (f *finisher) close() {
	f.once.Do(func() {
		f.mu.Lock()
		f.closed = true
		f.mu.Unlock()
		f.signal()
	})
}

// wait closes the queue, waits for every record to be finished (without
// counting the rest once ctx ends) and returns the records in the order
// their requests ended, how many responses were left uncounted, and the
// streamed JSONL export's partial file ("" when it was not streamed).
func (f *finisher) wait(ctx context.Context) (records []metrics.Record, uncounted int, jsonl string, err error) {
	f.close()
	select {
	case <-f.done:
	case <-ctx.Done():
		f.stop.Store(true)
		<-f.done
	}
	if f.jsonl != nil {
		jsonl, err = f.jsonl.finish()
	}
	if f.state.err != nil {
		err = errors.Join(err, fmt.Errorf("%w (they are all stored when the run ends)", f.state.err))
	}
	return f.state.records, int(f.missed.Load()), jsonl, err
}

func (f *finisher) run() {
	defer close(f.done)
	var batch []metrics.Record
	for {
		f.mu.Lock()
		batch, f.queue = f.queue, batch[:0]
		closed := f.closed
		f.mu.Unlock()
		for i := range batch {
			f.finish(batch[i])
			f.flushStore(f.batch)
		}
		clear(batch)
		if closed && len(batch) == 0 {
			f.flushStore(0)
			return
		}
		if len(batch) == 0 {
			<-f.wake
		}
	}
}

// finish completes one record and keeps it.
func (f *finisher) finish(r metrics.Record) {
	f.mu.Lock()
	o, ok := f.texts[r.Index]
	delete(f.texts, r.Index)
	f.mu.Unlock()
	if f.merged { // counted by its worker; its usage judged again here, as a local record's
		rejudge(&r)
		f.keep(r)
		return
	}
	replied := o.text != "" || o.reasoning != ""
	if f.outputs && replied {
		text := o.reasoning + o.text // AIPerf's: the reasoning channel, then the answer
		r.ResponseText = &text
	}
	// The client counts every reply, also under --use-server-token-count:
	// the server's counts are judged against the client's (CheckUsage) and
	// the client's stand in for them when they are not plausible. There
	// the chat template is rendered only when the server's prompt count
	// cannot be taken (it holds the template).
	templated, tried, stopped := false, false, f.stop.Load()
	switch {
	case !ok:
	case stopped:
		r.Uncounted = replied // its OSL is the server's, if trusted, else unknown: not 0
	default:
		if replied {
			r.OutputTokens = f.tok.Count(o.text)
		}
		if o.reasoning != "" {
			r.ReasoningTokens = f.tok.Count(o.reasoning)
		}
		if o.req != nil && !(f.server && r.Usage.Trusted()) {
			templated, tried = f.templated(&r, o.req), true
		}
	}
	st := &f.state
	// The rendered conversation holds the replies.
	if r.History && !templated {
		for _, rep := range st.replies[r.Session] {
			if rep.turn < r.Turn {
				r.InputTokens += rep.tokens
			}
		}
	}
	// The server's counts beside the client's and beside the text that
	// arrived, before they replace them.
	metrics.CheckUsage(&r)
	metrics.CheckReceived(&r, len(o.text), len(o.reasoning))
	switch {
	case !f.server:
	case metrics.TakeServerCounts(&r): // the client's kept for the audits (Record.Client)
	case ok && o.req != nil && !tried && !stopped:
		f.templated(&r, o.req) // no usage to take: the ISL as counted without the flag
	}
	// Only the replies the metrics hold are said to be uncounted: a cut
	// or failed request, or a warmup's, has no OSL in them to be the
	// server's or unknown.
	if stopped && replied && r.OK() && r.PhaseKind == plan.KindProfiling {
		f.missed.Add(1)
		if !metrics.OSLKnown(&r) {
			st.noOSL++
		}
	}
	if r.OK() && r.History {
		n := r.OutputTokens
		if n == 0 {
			n = r.ReasoningTokens
		}
		st.replies[r.Session] = append(st.replies[r.Session], turnReply{r.Turn, n})
	}
	f.keep(r)
}

// uncountedWarning is the audit's warning for the uncounted responses wait
// reported (uncounted > 0), once it has returned.
func (f *finisher) uncountedWarning(uncounted int) string {
	w := fmt.Sprintf("interrupted while counting output tokens: %d responses were not counted by the client", uncounted)
	n := f.state.noOSL
	if n == 0 {
		return w + " (their OSL is the server's usage)"
	}
	return w + fmt.Sprintf("; %d of them had no plausible server usage either: their OSL is unknown, so they are left out of "+
		"the OSL, inter-token latency and output throughput metrics, and the output token totals and throughput count "+
		"only the other replies (a lower bound)", n)
}

// keep stamps a finished record's wall-clock send, writes its line of the
// export and keeps it.
func (f *finisher) keep(r metrics.Record) {
	st := &f.state
	r.WallStartNs = f.clock.Wall(r.SentNs)
	if f.jsonl != nil && r.PhaseKind == plan.KindProfiling {
		f.jsonl.write(&r, f.streaming)
	}
	st.records = append(st.records, r)
	if f.watch != nil {
		f.watch.Record(&r)
	}
}

// storeBatch is how many finished records go to the store at once: one
// short write transaction each.
const storeBatch = 4096

// flushStore hands the records not stored yet to the store when at least
// least of them (and at least one) are waiting; the first record goes
// alone, so the run's row is in the store early (a run killed soon after
// is not lost).
func (f *finisher) flushStore(least int) {
	st := &f.state
	if st.stored == 0 {
		least = 1
	}
	if f.store == nil || st.err != nil || len(st.records)-st.stored < max(least, 1) {
		return
	}
	if st.err = f.store.Add(st.records[st.stored:]); st.err == nil {
		st.stored = len(st.records)
	}
}

// jsonlSink writes profile_export.jsonl while the run goes, to a partial
// file that the exports rename into place; the first write error stops it
// (the export is then written after the run, as without a sink).
type jsonlSink struct {
	path   string // of the partial file
	redact func(string) string
	f      *os.File
	w      *bufio.Writer
	line   []byte
	err    error
}

func newJSONLSink(final string, redact func(string) string) *jsonlSink {
	return &jsonlSink{path: final + ".partial", redact: redact}
}

func (s *jsonlSink) write(r *metrics.Record, streaming bool) {
	if s.err != nil {
		return
	}
	if s.f == nil {
		if s.err = os.MkdirAll(filepath.Dir(s.path), 0o755); s.err != nil {
			return
		}
		if s.f, s.err = os.Create(s.path); s.err != nil {
			return
		}
		s.w = bufio.NewWriterSize(s.f, 1<<20)
	}
	if r.Error != nil && s.redact != nil {
		e := *r.Error // the record keeps its own; the redacted run gets the store's
		e.Message = s.redact(e.Message)
		rr := *r
		rr.Error = &e
		r = &rr
	}
	if s.line, s.err = report.AppendJSONL(s.line[:0], r, streaming); s.err == nil {
		_, s.err = s.w.Write(s.line)
	}
}

// finish flushes and closes the partial file and returns its path, or ""
// and removes it when a write failed or nothing was written.
func (s *jsonlSink) finish() (string, error) {
	if s.f != nil {
		if s.err == nil {
			s.err = s.w.Flush()
		}
		if err := s.f.Close(); s.err == nil {
			s.err = err
		}
	}
	if s.err != nil {
		os.Remove(s.path)
		return "", fmt.Errorf("stream the jsonl export (it is written after the run instead): %w", s.err)
	}
	if s.f == nil {
		return "", nil // no profiling request
	}
	return s.path, nil
}

// rejudge checks a worker's record's server usage against the client's
// counts the worker made (kept in Record.Client where the server's
// replaced them, under --use-server-token-count); usage it finds untrusted
// gives the client's counts back to the record, as a local record keeps
// them.
func rejudge(r *metrics.Record) {
	metrics.CheckUsage(r)
	if !r.Usage.Trusted() {
		metrics.RestoreClientCounts(r)
	}
}
