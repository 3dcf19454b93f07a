package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/payload"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/reqid"
	"github.com/aiperf-go/aiperf/internal/shard"
)

// ErrTypeDataset is the error type of a request whose conversation could
// not be read back from the dataset (a trace file that changed under the
// run).
const ErrTypeDataset = "DatasetError"

// maxCachedBodies bounds the request bodies kept for reuse: a small
// dataset's single-turn conversations are encoded once each, a large
// trace's (sent once each) never.
const maxCachedBodies = 1 << 16

// source replays the dataset's conversations as the engine's sessions.
type source struct {
	p       plan.Profile
	now     func() int64 // the run's clock
	ds      dataset.Dataset
	sampler interface{ Next() int }
	client  *endpoint.Client
	fin     *finisher
	urls    []string
	extra   map[string]any
	// template and field are a template or raw endpoint's payload_template
	// and response_field (nil when not set).
	template *payload.Template
	field    *payload.Field
	ids      *reqid.Maker // of request and session ids (AIPerf's UUIDs)
	// bodies caches the encoded body of single-turn conversations, by
	// conversation × model, when the dataset is small enough.
	bodies []atomic.Pointer[[]byte]
	// system counts the shared system prompt, once.
	system func(string) int
	// ahead holds sessions the prefetcher prepared, for a file dataset.
	ahead chan *session
	stop  chan struct{}
	// held is the text of the sessions in ahead, in bytes (prefetchBytes
	// bounds it); room signals that some was taken, or Stop.
	heldMu  sync.Mutex
	room    *sync.Cond
	held    int
	stopped bool
	waiting bool // the prefetcher waits for room
	// cancel picks the requests --request-cancellation-rate aborts.
	cancel cancellation
	// raw keeps each profiling request's wire exchange (--export-level raw).
	raw bool
	// bust marks each session's prompt (--cache-bust); nil for none.
	bust *cacheBust
	// systemPrompt is --system-prompt's text, added to every conversation
	// as it is read ("" for none).
	systemPrompt string
	// joins holds a turn back until the sessions it waits for have ended;
	// nil across worker processes.
	joins *joins
	// tree is the dataset when its conversations start one another
	// (dag_jsonl): its sessions are dagSessions. orchestrators counts the
	// orchestrator sessions placed, thinks those that drew a think time.
	tree                  dataset.Tree
	orchestrators, thinks atomic.Int64
}

func newSource(p plan.Profile, now func() int64, ds dataset.Dataset, sampler interface{ Next() int }, client *endpoint.Client,
	fin *finisher, count func(string) int) *source {
	s := &source{p: p, now: now, cancel: newCancellation(p), ds: ds, sampler: sampler, client: client, fin: fin, urls: p.RequestURLs(),
		extra: p.BodyExtras(), ids: reqid.New(), system: memoCount(count), raw: p.ExportLevel == plan.ExportRaw}
	s.template, s.field = p.Template()
	if n := ds.Len() * len(p.Model); n <= maxCachedBodies {
		s.bodies = make([]atomic.Pointer[[]byte], n)
	}
	return s
}

// memoCount counts a text once: the shared system prompt is in every
// request of a run.
func memoCount(count func(string) int) func(string) int {
	var last atomic.Pointer[struct {
		text string
		n    int
	}]
	return func(text string) int {
		if m := last.Load(); m != nil && m.text == text {
			return m.n
		}
		n := count(text)
		last.Store(&struct {
			text string
			n    int
		}{text, n})
		return n
	}
}

// MeanTurns is the mean number of turns of the dataset's conversations,
// for user-centric mode's virtual history.
func (s *source) MeanTurns() float64 {
	return float64(dataset.Turns(s.ds)) / float64(max(1, s.ds.Len()))
}

// Next starts a session of the sampler's next conversation: prepared ahead
// by the prefetcher when the dataset is read from a file, else on its
// first send.
func (s *source) Next() load.Session {
	if s.tree != nil {
		return &dagSession{session: &session{src: s, conv: s.sampler.Next()}}
	}
	if s.ahead != nil {
		return s.prefetched()
	}
	return &session{src: s, conv: s.sampler.Next()}
}

// Fixed starts the session of conversation conv, prepared at once: the
// engine calls it ahead of the session's time.
func (s *source) Fixed(conv int) load.Session {
	sess := &session{src: s, conv: conv}
	sess.prepare()
	return sess
}

// session is one replay of a conversation: its history so far, and the URL
// and model every turn of it uses (chosen at its first turn, as AIPerf
// does).
type session struct {
	src     *source
	conv    int
	c       dataset.Conversation
	err     error // the conversation could not be read
	id      string
	url     int
	model   int
	history []endpoint.Message
	deltas  *deltaHistory // the history of a conversation of message deltas
	// sent is the client count of the history's user turns and system
	// prompts; the replies' counts are added once they are counted.
	sent   int
	loaded bool     // prepare read the conversation
	busted bool     // the cache-bust marker was applied
	first  *request // the first request, built by prepare
	bytes  int      // what the prefetcher holds of it (size), while it waits to be taken
	placed bool     // url and model were given (a DAG branch takes its parent's)
	reply  string   // the last live reply remembered
}

// Turns is the conversation's number of turns; the engine asks for it (and
// for Due) only after the first turn was sent, so a trace's conversation is
// read in the request's goroutine, off the schedule's path.
func (s *session) Turns() int { return max(1, len(s.c.Turns)) }

func (s *session) Due(i int) (time.Duration, int64, bool) {
	t := &s.c.Turns[i]
	if t.HasTimestamp {
		return 0, int64(t.TimestampMs * 1e6), true
	}
	return time.Duration(t.DelayMs * float64(time.Millisecond)), 0, false
}

// prepare reads the conversation and, with a single model, builds and
// encodes its first request: the costly part of a trace's session (a
// prompt of many thousand tokens), done before its send time.
func (s *session) prepare() {
	s.load()
	if s.err != nil || len(s.src.p.Model) > 1 || s.src.bust != nil && s.src.bust.phased() {
		return
	}
	s.src.bust.apply(s, "")
	r := s.request(&s.c.Turns[0], "")
	if r.Body == nil && r.Payload == nil {
		r.Body, _ = endpoint.Body(r.Request) // an error is reported by Do
	}
	s.first = &r
}

// turnModel is the index of the model turn t of c goes to: the one the
// trace names (its rank among the trace's models, over the --model list),
// else model.
func (s *source) turnModel(c *dataset.Conversation, t, model int) int {
	if c.ModelRanked {
		return c.Turns[t].ModelRank % len(s.p.Model)
	}
	return model
}

// Send sends turn i of the conversation.
func (s *session) Send(ctx context.Context, i int, c load.Credit) metrics.Record {
	src := s.src
	if i == 0 {
		if !s.loaded {
			s.load()
		}
		if s.err == nil {
			src.bust.apply(s, c.Phase.Kind)
		}
		s.id = src.ids.UUID()
		if !s.placed {
			s.url, s.model = c.Index%len(src.urls), src.modelOf(c.Index)
		}
	}
	if s.err == nil {
		s.model = src.turnModel(&s.c, i, s.model)
	}
	rec := metrics.Record{
		Index: c.Index, Phase: c.Phase.Name, PhaseKind: c.Phase.Kind, ScheduledNs: c.ScheduledNs,
		RequestNum: c.PhaseNum, IssuedNs: c.IssuedNs, ReceivedNs: c.ReceivedNs,
		Prompt: s.conv, URL: s.url, Model: src.p.Model[s.model], Streaming: src.p.Streams(), NoTokens: !src.p.Spec().Tokens,
		Session: c.Session, Turn: i, Conversation: s.c.ID, CorrelationID: s.id,
		RequestID: src.ids.UUID(),
	}
	if s.err != nil {
		src.joins.finish(c.Phase.Name, s.conv)
		now := src.now()
		rec.SentNs, rec.EndNs = now, now
		rec.Error = &metrics.Error{Type: ErrTypeDataset, Message: fmt.Sprintf("read conversation %d: %v", s.conv, s.err)}
		return rec
	}
	turn := &s.c.Turns[i]
	rec.Model = cmp.Or(turn.Model, rec.Model)
	if len(turn.Join) > 0 && src.joins != nil && joinable(c.Phase) {
		src.joins.wait(ctx, c.Phase.Name, turn.Join)
	}
	var req request
	if i == 0 && s.first != nil {
		req = *s.first
		req.URL, req.RequestID, req.SessionID = src.urls[s.url], rec.RequestID, s.id
	} else {
		req = s.request(turn, rec.RequestID)
	}
	rec.InputTokens, rec.RequestedOutputTokens, rec.History = req.isl, turn.MaxTokens, req.history
	req.LastTurn = i == len(s.c.Turns)-1
	req.Cancel, req.CancelAfter = src.cancel.picks(c.Phase, rec.Index)
	req.FirstToken = c.FirstToken
	req.SendBy = c.SendBy
	if src.raw && rec.PhaseKind == plan.KindProfiling {
		req.Raw = &metrics.Raw{}
		rec.Raw = req.Raw
	}
	resp := src.client.Do(ctx, req.Request)
	if resp.NotSent {
		src.joins.finish(c.Phase.Name, s.conv)
		rec.NotSent = true
		return rec
	}
	rec.SentNs, rec.EndNs = resp.SentNs, resp.EndNs
	rec.Usage, rec.SpecDecode, rec.Status, rec.Error = resp.Usage, resp.SpecDecode, resp.Status, resp.Err
	rec.Retried, rec.MalformedChunks, rec.Cancelled = resp.Retried, resp.MalformedChunks, resp.Cancelled
	rec.HTTP = resp.HTTP
	if resp.Cancelled {
		rec.CutBy = metrics.CutOnPurpose
	}
	rec.Media = mediaStats(&req.Request, &resp)
	text, reasoning := fillChunks(&rec, &resp)
	var chat *endpoint.Request // its ISL is counted through the chat template, in the finisher
	if src.fin.chat != nil {
		sent := req.Request // a copy: req itself stays off the heap
		chat = &sent
	}
	src.fin.text(rec.Index, text, reasoning, chat)
	if req.history {
		s.remember(turn, text, reasoning, resp.Err == nil)
	}
	if req.LastTurn {
		src.joins.finish(c.Phase.Name, s.conv)
	}
	return rec
}

// request is a turn's request and what the record needs of it.
type request struct {
	endpoint.Request
	isl     int  // the client's count of what was sent, replies excepted
	history bool // the request re-sends the session's history
}

// request builds the request of turn t: the conversation so far when the
// conversation accumulates it, else the turn on its own.
func (s *session) request(t *dataset.Turn, id string) request {
	src := s.src
	r := request{Request: endpoint.Request{
		URL: src.urls[s.url], EndpointType: src.p.EndpointType, Model: cmp.Or(t.Model, src.p.Model[s.model]),
		MaxTokens: t.MaxTokens, LegacyMaxTokens: src.p.UseLegacyMaxTokens, Streaming: src.p.Streams(), PerChunkUsage: src.p.PerChunkUsage, Extra: src.extra, TurnExtra: t.Extra,
		Tools: t.Tools, RequestID: id, SessionID: s.id, Inputs: t.Inputs, Query: t.Query, Passages: t.Passages,
		Template: src.template, ResponseField: src.field, DownloadVideo: src.p.DownloadVideoContent,
	}}
	switch {
	case len(t.Payload) > 0:
		r.Payload, r.isl = t.Payload, t.InputTokens
	case len(t.Messages) > 0 && threadsDeltas(&s.c):
		if s.deltas == nil {
			s.deltas = &deltaHistory{}
		}
		r.RawMessages, r.Tools = s.deltas.add(t)
		s.sent += t.InputTokens
		r.isl, r.history = s.sent, true
	case len(t.Messages) > 0:
		r.RawMessages, r.isl = t.Messages, t.InputTokens
	case s.c.Mode == dataset.DeltasWithoutResponses && (len(s.c.Turns) > 1 || s.c.System != "" || s.c.Context != ""):
		if s.history == nil {
			s.history, s.sent = s.opening()
		}
		role := t.Role
		if role == "" {
			role = "user"
		}
		s.history = append(s.history, endpoint.Message{Role: role, Content: t.Text, Media: t.Media})
		s.sent += t.InputTokens
		r.Messages, r.isl, r.history = s.history, s.sent, true
	case s.c.System != "" || s.c.Context != "": // self-contained turns, each after the opening
		msgs, n := s.opening()
		r.Messages = append(msgs, endpoint.Message{Role: cmp.Or(t.Role, "user"), Content: t.Text, Media: t.Media})
		r.isl = n + t.InputTokens
	case t.Role != "" && t.Role != "user" && src.p.Spec().Messages: // a lone turn sent under its own role, as AIPerf's
		r.Messages = []endpoint.Message{{Role: t.Role, Content: t.Text, Media: t.Media}}
		r.isl = t.InputTokens
	default:
		r.Prompt, r.isl, r.Media = t.Text, t.InputTokens, t.Media
		if src.p.EndpointType == plan.EndpointAudioTranscription {
			r.isl = 0 // its input is the audio: no text is sent
		}
		if len(s.c.Turns) == 1 { // the cache holds one body per conversation
			r.Body = src.cachedBody(s.conv, s.model, r.Request)
		}
	}
	return r
}

// opening is the messages every request of the conversation starts with
// (its system prompt and user context) and their client count.
func (s *session) opening() ([]endpoint.Message, int) {
	var msgs []endpoint.Message
	n := 0
	if s.c.System != "" {
		msgs = append(msgs, endpoint.Message{Role: "system", Content: s.c.System})
		n += s.src.system(s.c.System)
	}
	if s.c.Context != "" {
		msgs = append(msgs, endpoint.Message{Role: "user", Content: s.c.Context})
		n += s.src.fin.tok.Count(s.c.Context)
	}
	return msgs, n
}

// remember appends the server's live reply to the history (AIPerf's
// default context mode); a failed turn leaves none, so the next request
// has two user messages in a row, as in AIPerf.
func (s *session) remember(t *dataset.Turn, text, reasoning string, ok bool) {
	if !ok {
		return
	}
	reply := text
	if strings.TrimSpace(reply) == "" {
		reply = reasoning
	}
	s.reply = reply
	if s.deltas != nil {
		s.deltas.reply(reply)
		return
	}
	s.history = append(s.history, endpoint.Message{Role: "assistant", Content: reply})
}

// cachedBody returns the encoded body of a single-turn conversation's
// request, encoding it once when the dataset is small enough to keep them.
// A body with media is not kept: its media are already held once, and
// splicing them into a body is a copy (BenchmarkMediaBody).
func (s *source) cachedBody(conv, model int, req endpoint.Request) []byte {
	if s.bodies == nil || len(req.TurnExtra) > 0 || len(req.Media) > 0 {
		return nil
	}
	slot := &s.bodies[conv*len(s.p.Model)+model]
	if b := slot.Load(); b != nil {
		return *b
	}
	b, err := endpoint.Body(req)
	if err != nil {
		return nil // Do reports it
	}
	slot.Store(&b)
	return b
}

// fillChunks stamps the record with its response times, and whether a
// reply asked to stream arrived whole, and returns the output text and
// reasoning, for counting.
func fillChunks(rec *metrics.Record, resp *endpoint.Response) (text, reasoning string) {
	chunks := resp.Chunks
	if len(chunks) == 0 {
		return "", ""
	}
	rec.ResponseNs = metrics.StampsFrom(len(chunks), func(i int) int64 { return chunks[i].At })
	rec.NotStreamed = rec.Streaming && resp.Whole
	for _, ch := range chunks {
		if ch.Text != "" {
			rec.FirstOutputNs = ch.At
			break
		}
	}
	return resp.Output()
}

// source builds the engine's sessions over the dataset, drawn in the data's
// sampling order (or --dataset-sampling-strategy's).
func (c *cell) source(client *endpoint.Client) (*source, error) {
	sampler, err := dataset.NewStrategySampler(c.ds.Sampling(), c.ds.Len(), c.p.RandomSeed)
	if err != nil {
		return nil, err
	}
	var draw shard.Sampler = sampler
	if c.worker != nil { // this worker's draws of the one sequence
		spec := c.worker.Spec()
		draw = shard.Stride(sampler, spec.Worker, spec.Workers)
	}
	src := newSource(c.p, c.clock.Now, c.ds, draw, client, c.fin, c.tok.Count)
	src.tree, _ = c.ds.(dataset.Tree)
	if c.worker == nil { // one process: every session of the schedule is here
		src.joins = newJoins()
	}
	src.systemPrompt = c.systemPrompt
	if src.bust = newCacheBust(c.p.CacheBust, c.bustSalt(), dataset.Nodes(c.ds), c.tok.Count); src.bust != nil {
		src.bodies = nil // each session's prompt is its own
	}
	if c.p.InputFile != "" && src.tree == nil && slices.ContainsFunc(c.phases, func(ph plan.Phase) bool { return !ph.Fixed }) {
		src.prefetch() // a fixed schedule's sessions are prepared as their times come (Fixed)
	}
	return src, nil
}

// fixedStarts is the engine's view of the dataset's fixed schedule (nil
// for none); a worker's is its share of the entries, at their times.
func (c *cell) fixedStarts() load.FixedStarts {
	sched := c.ds.Schedule()
	if sched == nil {
		return nil
	}
	i, w := 0, 1
	if c.worker != nil {
		i, w = c.worker.Spec().Worker, c.worker.Spec().Workers
	}
	return func(yield func(int, int64) bool) {
		for j, t := range sched {
			if shard.Mine(j, i, w) && !yield(t.Conv, int64(t.AtMs*1e6)) {
				return
			}
		}
	}
}

// modelSalt keeps the random model draw apart from the cancellation draw
// of the same seed and index.
const modelSalt = 0x6d6f64656c73 // "models"

// modelOf is the model (its index in --model) of the session whose first
// request has issue index i: round robin, or with
// --model-selection-strategy random a uniform draw seeded by --random-seed.
func (s *source) modelOf(i int) int {
	n := len(s.p.Model)
	if s.p.ModelSelectionStrategy == plan.ModelRandom {
		return int(draw(uint64(s.p.RandomSeed)^modelSalt, i) % uint64(n))
	}
	return i % n
}
