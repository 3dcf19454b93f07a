package load

import (
	"context"
	"iter"
	"time"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// Session replays one conversation, one turn at a time: turn i+1 is sent
// only after turn i returned, once its delay has elapsed (or, on a fixed
// schedule, at its own time). A single-turn request is a session of one
// turn. A Session is used by one goroutine at a time.
type Session interface {
	// Turns is the number of turns (at least 1).
	Turns() int
	// Due says when turn i ≥ 1 may be sent: delay after turn i-1 returned,
	// or, when abs, at offset at (ns from the phase's schedule zero).
	Due(i int) (delay time.Duration, at int64, abs bool)
	// Send sends turn i and returns its record; it stamps SentNs itself,
	// right before the request is written, and reports failures in the
	// record.
	Send(ctx context.Context, i int, c Credit) metrics.Record
}

// Source makes the sessions the engine replays.
type Source interface {
	// Next starts a session of the next conversation (the dataset's
	// sampler decides which).
	Next() Session
	// Fixed starts the session of conversation conv, for a fixed schedule.
	// It is called ahead of the session's time, from a goroutine of its
	// own: the place for a session to prepare its first request.
	Fixed(conv int) Session
}

// FixedStarts lists a fixed schedule: every conversation to replay and the
// offset of its first turn (ns from the phase's start), ascending.
type FixedStarts = iter.Seq2[int, int64]

// Sender performs one request and returns its record; it reports failures in
// the record, never by panicking. It must stamp SentNs itself, right before
// the request is written.
type Sender func(ctx context.Context, c Credit) metrics.Record

// SingleTurn is a Source of one-turn sessions, each sending one request
// through send: the classic benchmark of independent requests.
func SingleTurn(send Sender) Source { return singleTurn{send} }

type singleTurn struct{ send Sender }

func (s singleTurn) Next() Session                      { return s }
func (s singleTurn) Fixed(int) Session                  { return s }
func (singleTurn) Turns() int                           { return 1 }
func (singleTurn) Due(int) (time.Duration, int64, bool) { return 0, 0, false }
func (s singleTurn) Send(ctx context.Context, _ int, c Credit) metrics.Record {
	return s.send(ctx, c)
}
