package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// Rankings describes synthetic rankings requests (AIPerf's
// --rankings-passages-*, --rankings-query-* flags): a query and
// round(normal(Passages, PassagesStddev)) ≥ 1 passages, each text of a
// drawn length.
type Rankings struct {
	Passages, PassagesStddev           int
	PassageTokens, PassageTokensStddev int
	QueryTokens, QueryTokensStddev     int
}

// streamPassages draws the passages per rankings request.
const streamPassages = streamPrefix + 1

// openInputs draws single-turn requests of several texts: o.Batch texts of
// ISL-drawn lengths (batched embeddings), or a query and passages
// (rankings). A turn's InputTokens is the sum over its texts.
func openInputs(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	ids, err := o.corpus(tok)
	if err != nil {
		return nil, err
	}
	stream := func(s uint64) *rand.Rand { return rand.New(rand.NewPCG(uint64(o.Seed), s)) }
	lengths, windows, counts, mixture := stream(streamLengths), stream(streamWindows), stream(streamPassages), stream(streamMixture)
	text := func(what string, n int) (string, error) {
		t, err := exactPrompt(tok, ids, n, windows)
		if err != nil {
			return "", fmt.Errorf("synthetic dataset: %s: %w", what, err)
		}
		return t, nil
	}
	d := &memDataset{convs: make([]Conversation, o.Entries), sampling: samplingOr(o, SamplingShuffle), turns: o.Entries}
	for i := range d.convs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("synthetic requests: stopped after %d of %d: %w", i, o.Entries, err)
		}
		var t Turn
		var err error
		if r := o.Rankings; r != nil {
			n := drawLength(lengths, r.QueryTokens, float64(r.QueryTokensStddev))
			if t.Query, err = text(fmt.Sprintf("request %d query", i), n); err != nil {
				return nil, err
			}
			t.InputTokens = n
			t.Passages = make([]string, drawLength(counts, r.Passages, float64(r.PassagesStddev)))
			for k := range t.Passages {
				n := drawLength(lengths, r.PassageTokens, float64(r.PassageTokensStddev))
				if t.Passages[k], err = text(fmt.Sprintf("request %d passage %d", i, k), n); err != nil {
					return nil, err
				}
				t.InputTokens += n
			}
		} else {
			l := o.lengthsOf(mixture)
			t.Inputs = make([]string, o.Batch)
			for k := range t.Inputs {
				n := l.drawISL(lengths)
				if t.Inputs[k], err = text(fmt.Sprintf("request %d input %d", i, k), n); err != nil {
					return nil, err
				}
				t.InputTokens += n
			}
			t.Text = t.Inputs[0]
		}
		d.convs[i] = Conversation{ID: fmt.Sprintf("conv-%d", i), Turns: []Turn{t}, Mode: DeltasWithoutResponses}
	}
	return d, nil
}
