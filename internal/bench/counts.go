package bench

import (
	"runtime"
	"sync"

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
// releases the text.
func (c *outputCounts) fill(records []metrics.Record) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(records); i += workers {
				if o, ok := c.pending[records[i].Index]; ok {
					c.count(&records[i], o)
				}
			}
		}()
	}
	wg.Wait()
	c.pending, c.bytes = nil, 0
}
