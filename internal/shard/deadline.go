package shard

import (
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Deadlines bound every wait of the coordinator on a worker, so that a
// worker that stalls (stopped, hung, cut off from the network) or
// misbehaves never hangs the cell: a worker that misses one is killed and
// named in the cell's error, the others are stopped, and what they sent
// is kept. Zero values take the defaults.
type Deadlines struct {
	// Silence: a worker that sends nothing for this long has stalled.
	// Workers beat every Silence/10 from the moment they read their spec,
	// whatever they are doing; a worker that has not said anything yet is
	// starting, bounded by Handshake. Default DefaultSilence.
	Silence time.Duration
	// Handshake bounds a worker's start: from its spec to its clock
	// measured, the worker prepares (tokenizer, dataset) and says hello.
	// Default DefaultHandshake.
	Handshake time.Duration
	// Drain bounds how long a worker may go on with a phase that another
	// worker drained, without sending a record. Default: the phase's grace
	// period after its duration when it has both (else RequestTimeout, a
	// request's longest), and drainMargin.
	Drain time.Duration
	// RequestTimeout is the longest a request may take (--request-timeout-seconds);
	// the drain's default rests on it. Default: an hour.
	RequestTimeout time.Duration
	// Grace is how long workers told to stop (Ctrl-C, another worker's
	// failure) have to end before they are killed. Default: Silence, at
	// least minGrace.
	Grace time.Duration
}

// Defaults of Deadlines.
const (
	DefaultSilence   = 30 * time.Second
	DefaultHandshake = 5 * time.Minute
	// drainMargin is added to a derived drain deadline: a worker's last
	// records on their way.
	drainMargin = 30 * time.Second
	// minGrace is the least default grace: a worker told to stop cuts its
	// requests and reduces its records before it ends.
	minGrace = 30 * time.Second
)

// resolved is d with its defaults filled in.
func (d Deadlines) resolved() Deadlines {
	if d.Silence <= 0 {
		d.Silence = DefaultSilence
	}
	if d.Handshake <= 0 {
		d.Handshake = DefaultHandshake
	}
	if d.RequestTimeout <= 0 {
		d.RequestTimeout = time.Hour
	}
	if d.Grace <= 0 {
		d.Grace = max(d.Silence, minGrace)
	}
	return d
}

// heartbeat is how often a worker beats.
func (d Deadlines) heartbeat() time.Duration { return max(d.Silence/10, time.Millisecond) }

// check is how often the coordinator looks for a missed deadline: a tenth
// of the shortest, at most a second.
func (d Deadlines) check() time.Duration {
	shortest := min(d.Silence, d.Handshake)
	if d.Drain > 0 {
		shortest = min(shortest, d.Drain)
	}
	return min(max(shortest/10, time.Millisecond), time.Second)
}

// drainFor is the drain deadline of phase ph, and where it comes from.
func (d Deadlines) drainFor(ph plan.Phase) time.Duration {
	switch {
	case d.Drain > 0:
		return d.Drain
	case ph.Duration > 0 && ph.GracePeriod >= 0:
		return time.Duration(ph.GracePeriod*float64(time.Second)) + drainMargin
	}
	return d.RequestTimeout + drainMargin
}
