package bench

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// textBudget bounds the response text waiting to be counted: in the
// counter's queue and, when the counter falls behind, kept for after the
// run.
const textBudget = 256 << 20

// queueLen is how many responses wait for the counter before the rest are
// kept for after the run.
const queueLen = 4096

// outputCounts counts the client-side tokens of every response on one
// background goroutine while the load runs, off the path of any request:
// a response's text is handed over when its request ends and counted
// within microseconds, so it is not kept for long, and after the run little
// is left to count. When the counter falls behind (its queue is full), the
// text is kept and counted after the load, on every core; past textBudget
// bytes of such text it is counted where it arrives.
type outputCounts struct {
	tok     tokenizer.Tokenizer
	queue   chan countJob
	done    chan struct{}
	closing sync.Once
	stop    atomic.Bool  // drain the queue without counting (interrupted)
	skipped atomic.Int64 // responses drained without a count

	mu      sync.Mutex
	counted []tokenPair        // by Record.Index; the counter's results
	pending map[int]outputText // by Record.Index; kept for after the run
	bytes   int                // of pending text
}

type outputText struct{ text, reasoning string }

type countJob struct {
	index int
	outputText
}

// tokenPair is a response's output and reasoning token counts, +1 so that
// the zero value means "not counted".
type tokenPair struct{ output, reasoning int32 }

func newOutputCounts(tok tokenizer.Tokenizer) *outputCounts {
	c := &outputCounts{tok: tok, queue: make(chan countJob, queueLen), done: make(chan struct{}),
		pending: map[int]outputText{}}
	go c.work()
	return c
}

// work counts queued responses until the queue is closed.
func (c *outputCounts) work() {
	defer close(c.done)
	for j := range c.queue {
		if c.stop.Load() {
			c.skipped.Add(1)
			continue
		}
		p := tokenPair{output: int32(c.tok.Count(j.text)) + 1, reasoning: 1}
		if j.reasoning != "" {
			p.reasoning = int32(c.tok.Count(j.reasoning)) + 1
		}
		c.mu.Lock()
		for len(c.counted) <= j.index {
			c.counted = append(c.counted, make([]tokenPair, max(len(c.counted), 1024))...)
		}
		c.counted[j.index] = p
		c.mu.Unlock()
	}
}

// close ends the counter's queue: no response is added after it. Run
// calls it on every way out, so the counter never outlives its run.
func (c *outputCounts) close() { c.closing.Do(func() { close(c.queue) }) }

// add hands a response's text to the counter, or keeps it for after the
// run when the counter is behind.
func (c *outputCounts) add(rec *metrics.Record, text, reasoning string) {
	if text == "" && reasoning == "" {
		return
	}
	select {
	case c.queue <- countJob{rec.Index, outputText{text, reasoning}}:
		return
	default:
	}
	n := len(text) + len(reasoning)
	c.mu.Lock()
	if c.bytes+n <= textBudget {
		c.pending[rec.Index] = outputText{text, reasoning}
		c.bytes += n
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.count(rec, outputText{text, reasoning})
}

func (c *outputCounts) count(rec *metrics.Record, o outputText) {
	rec.OutputTokens = c.tok.Count(o.text)
	if o.reasoning != "" {
		rec.ReasoningTokens = c.tok.Count(o.reasoning)
	}
}

// fill waits for the counter to finish its queue, then sets every record's
// counts: the counter's, and those of the text kept for after the run,
// counted on all cores. It stops early when ctx is cancelled and returns
// how many responses were left uncounted. It is called once, after the
// load.
func (c *outputCounts) fill(ctx context.Context, records []metrics.Record) (uncounted int) {
	c.close()
	select {
	case <-c.done:
	case <-ctx.Done():
		c.stop.Store(true) // the counter drops the rest of its queue
		<-c.done
	}
	counted := c.counted
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(records); i += workers {
				r := &records[i]
				if r.Index < len(counted) && counted[r.Index].output > 0 {
					r.OutputTokens, r.ReasoningTokens = int(counted[r.Index].output-1), int(counted[r.Index].reasoning-1)
					continue
				}
				o, ok := c.pending[r.Index]
				switch {
				case !ok:
				case ctx.Err() != nil:
					c.skipped.Add(1)
				default:
					c.count(r, o)
				}
			}
		})
	}
	wg.Wait()
	c.pending, c.bytes, c.counted = nil, 0, nil
	return int(c.skipped.Load())
}
