package bench

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// textBudget bounds the response text kept for counting after the run.
const textBudget = 256 << 20

// outputCounts defers the client-side token count of every response until
// the load has stopped, so tokenizing never competes with sending requests
// and reading streams. Past textBudget bytes of pending text it counts inline.
type outputCounts struct {
	tok     tokenizer.Tokenizer
	mu      sync.Mutex
	pending map[int]outputText // by Record.Index
	bytes   int
}

type outputText struct{ text, reasoning string }

func newOutputCounts(tok tokenizer.Tokenizer) *outputCounts {
	return &outputCounts{tok: tok, pending: map[int]outputText{}}
}

// add keeps a response's text for later, or counts it now when over budget.
func (c *outputCounts) add(rec *metrics.Record, text, reasoning string) {
	if text == "" && reasoning == "" {
		return
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

// fill counts every pending text into its record, on all cores, and
// releases the text. It stops early when ctx is cancelled and returns how
// many responses were left uncounted.
func (c *outputCounts) fill(ctx context.Context, records []metrics.Record) (uncounted int) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	var skipped atomic.Int64
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(records); i += workers {
				o, ok := c.pending[records[i].Index]
				switch {
				case !ok:
				case ctx.Err() != nil:
					skipped.Add(1)
				default:
					c.count(&records[i], o)
				}
			}
		})
	}
	wg.Wait()
	c.pending, c.bytes = nil, 0
	return int(skipped.Load())
}
