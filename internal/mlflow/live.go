package mlflow

import (
	"context"
	"fmt"
	"time"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
)

// liveGrace is how long a live send in flight at the run's interrupt (a
// Ctrl-C) still has to be answered: unanswered then, it is cut and the
// server taken for gone quiet, so nothing more is sent. A variable for the
// tests.
var liveGrace = interruptedUpdate

// StartLive starts sending the live.* scalars and records the live run in
// ArtifactDir's mlflow_export.json. The run's interrupt reaches the live
// sends through Finish's context; StartLiveContext lets it reach them at
// once.
func (r *Run) StartLive() { r.StartLiveContext(context.Background()) }

// StartLiveContext is StartLive for a run whose cancellation is ctx's (a
// Ctrl-C): the live send then in flight gets liveGrace more to be
// answered, then is cut, without waiting for Finish.
func (r *Run) StartLiveContext(ctx context.Context) {
	if r.o.Interval <= 0 {
		r.o.Interval = 2 * time.Second
	}
	if r.o.Queue <= 0 {
		r.o.Queue = 1 << 14
	}
	r.queue, r.done = make(chan Metric, r.o.Queue), make(chan struct{})
	r.liveCtx, r.liveCancel = context.WithCancel(context.Background())
	r.unwatch = context.AfterFunc(ctx, r.interrupt)
	_ = r.writeExportFile(exportFile{LiveStreaming: true}) // rewritten by Finish
	go r.live()
}

// interrupt gives the live send in flight liveGrace to be answered, then
// cuts it (and any later one).
func (r *Run) interrupt() {
	r.graceOnce.Do(func() {
		r.ending.Store(true)
		time.AfterFunc(liveGrace, r.liveCancel)
	})
}

// Watch is part of bench.Exporter.
func (r *Run) Watch(func() *load.Progress, load.Clock) {}

// The live scalars: AIPerf's live.* keys of the GenAI metric names.
const (
	liveDuration = "live.gen_ai.client.operation.duration"
	liveTokens   = "live.gen_ai.client.token.usage"
	liveFirst    = "live.gen_ai.client.operation.time_to_first_chunk"
	livePerChunk = "live.gen_ai.client.operation.time_per_output_chunk"
)

// Record queues the live scalars of a successful request, at its index as
// the step; it never blocks.
func (r *Run) Record(rec *metrics.Record) {
	if r.queue == nil || !rec.OK() {
		return
	}
	now, step := time.Now().UnixMilli(), int64(rec.Index)
	tt := metrics.Times(rec, r.o.Streaming)
	put := func(key string, v float64) {
		select {
		case r.queue <- Metric{Key: key, Value: v, Timestamp: now, Step: step}:
		default:
			r.dropped.Add(1)
		}
	}
	put(liveDuration, float64(tt.LatencyNs)/1e9)
	if !rec.NoTokens && !tt.NoOSL { // an uncounted reply's OSL is not known, not 0
		put(liveTokens, float64(tt.OSL))
	}
	if tt.Streamed && !rec.NoTokens {
		put(liveFirst, float64(tt.TTFTNs)/1e9)
		if tt.HasITL {
			put(livePerChunk, tt.ITLNs/1e9)
		}
	}
}

// live sends the queued scalars every Interval, or as soon as a batch is
// full; after a failure it stops sending and drains.
func (r *Run) live() {
	defer close(r.done)
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	var batch []Metric
	flush := func() {
		// After the grace of an interrupt nothing more is sent: the
		// summary holds what the scalars still queued would tell.
		if len(batch) > 0 && !r.liveErr.Load() && r.liveCtx.Err() == nil {
			r.send(batch)
		}
		batch = batch[:0]
	}
	for {
		select {
		case m, ok := <-r.queue:
			if !ok {
				flush()
				return
			}
			if batch = append(batch, m); len(batch) >= batchMetrics {
				flush()
			}
		case <-t.C:
			flush()
		}
	}
}

// send logs one live batch. A failure stops the live sends: while the run
// goes, with one warning (the summary still goes at the end); once it is
// ending, a send left unanswered is the end's one unanswered call (endErr:
// Finish sends nothing more and reports it), so a server gone quiet costs
// the end one request timeout, or liveGrace after a Ctrl-C.
func (r *Run) send(batch []Metric) {
	err := r.c.LogBatch(r.liveCtx, r.Info.RunID, batch, nil, nil) // bounded by the request timeout
	if err == nil {
		return
	}
	if r.liveCtx.Err() != nil { // cut at the end of the grace: the server did not answer in it
		err = &NoAnswerError{fmt.Sprintf("mlflow POST /api/2.0/mlflow/runs/log-batch: no answer %s after the run's interrupt", liveGrace)}
	}
	r.liveErr.Store(true)
	if NoAnswer(err) && r.ending.Load() {
		r.endErr = err
		return
	}
	r.o.Warn(fmt.Sprintf("mlflow live logging stopped: %v; the summary is still uploaded when the run ends", err))
}

// stopLive sends what is queued and stops the live goroutine, returning
// the live send of the end left unanswered (nil: none). The wait is
// bounded: by the request timeout of the sends, and once ctx is done (a
// Ctrl-C, before the finish or during this wait) by liveGrace.
func (r *Run) stopLive(ctx context.Context) error {
	r.once.Do(func() {
		if r.queue == nil {
			return
		}
		r.ending.Store(true)
		close(r.queue)
		select {
		case <-r.done:
		case <-ctx.Done():
			r.interrupt()
			<-r.done
		}
		r.unwatch()
		r.liveCancel()
	})
	if r.queue == nil {
		return nil
	}
	<-r.done // a concurrent first call's wait
	return r.endErr
}
