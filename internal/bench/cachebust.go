package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// warmupMarker is the constant marker of the warmup-isolation targets.
const warmupMarker = "[warmup]\n\n"

// cacheBust is --cache-bust (AIPerf's cache-bust targets): a marker put in
// each session's system message or first user turn so that a server's
// prefix cache cannot reuse another session's work (the rid targets), or
// the warmup's (the warmup_isolation targets).
type cacheBust struct {
	target string
	salt   string          // the run's id (and worker): another run mints other markers
	passes []atomic.Uint32 // sessions started so far, per conversation
	count  func(string) int
}

// newCacheBust is the run's cache bust, nil for none.
func newCacheBust(target, salt string, conversations int, count func(string) int) *cacheBust {
	if target == "" || target == plan.CacheBustNone {
		return nil
	}
	return &cacheBust{target: target, salt: salt, passes: make([]atomic.Uint32, conversations), count: count}
}

// phased reports whether the marker depends on the phase, known only when
// the session's first turn is sent.
func (b *cacheBust) phased() bool { return strings.HasPrefix(b.target, "warmup_isolation_") }

// marker is the text session s carries: AIPerf's [rid:<12 hex>] of a
// SHA-256 over the run, the conversation's pass and its index and id, with
// a blank line on the side of the text; the warmup marker in a warmup
// phase; "" for none.
func (b *cacheBust) marker(s *session, phaseKind string) string {
	if b.phased() {
		if phaseKind == plan.KindWarmup {
			return warmupMarker
		}
		return ""
	}
	pass := b.passes[s.conv].Add(1) - 1
	sum := sha256.Sum256(fmt.Appendf(nil, "%s:%d:%d:%s", b.salt, pass, s.conv, s.c.ID))
	rid := "[rid:" + hex.EncodeToString(sum[:])[:12] + "]"
	if strings.HasSuffix(b.target, "_prefix") {
		return rid + "\n\n"
	}
	return "\n\n" + rid
}

// apply marks session s's conversation (its own copy): the system message
// for the system targets when it has one, else the first user turn; a
// turn's input length is recounted. Turns sent verbatim (messages or a
// payload) are left as they are.
func (b *cacheBust) apply(s *session, phaseKind string) {
	if b == nil || s.busted || len(s.c.Turns) == 0 {
		return
	}
	s.busted = true
	m := b.marker(s, phaseKind)
	if m == "" {
		return
	}
	at := func(text string) string {
		if strings.HasPrefix(m, "\n") {
			return text + m
		}
		return m + text
	}
	if strings.Contains(b.target, "system") && s.c.System != "" {
		s.c.System = at(s.c.System)
		return
	}
	t := &s.c.Turns[0]
	if len(t.Payload) > 0 || len(t.Messages) > 0 || t.Text == "" {
		return
	}
	t.Text = at(t.Text)
	t.InputTokens = b.count(t.Text)
}

// markerCost is AIPerf's estimate of a rid marker's tokens: the mean count
// of eight sample markers; 0 for the warmup-isolation targets (no marker
// in the profiling phase).
func markerCost(target string, count func(string) int) int {
	b := newCacheBust(target, "estimator", 8, count)
	if b == nil || b.phased() {
		return 0
	}
	total := 0
	for i := range 8 {
		s := &session{conv: i, c: dataset.Conversation{ID: fmt.Sprintf("estimator-%d", i)}}
		total += count(b.marker(s, plan.KindProfiling))
	}
	return (total + 4) / 8
}

// sizeForCacheBust makes room for the marker in synthetic prompts, as
// AIPerf: the shared system prompt, or else each conversation's first
// turn, is drawn shorter by the marker's tokens, so that what is sent has
// the configured length.
func (c *cell) sizeForCacheBust(o *dataset.Options) {
	cost := markerCost(c.p.CacheBust, c.tok.Count)
	if cost == 0 || o.InputFile != "" {
		return
	}
	if strings.HasPrefix(c.p.CacheBust, "system_") && o.SharedSystemLength > 0 {
		o.SharedSystemLength = max(1, o.SharedSystemLength-cost)
		return
	}
	o.Template.First += cost
}

// bustSalt is what makes this run's (and this worker's) markers its own.
func (c *cell) bustSalt() string {
	if c.worker != nil {
		return fmt.Sprintf("%s/w%d", c.run.BenchmarkID, c.worker.Spec().Worker)
	}
	return c.run.BenchmarkID
}
