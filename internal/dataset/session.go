package dataset

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// Random streams of synthetic conversations, after those of Synthetic, so
// that a single-turn dataset draws exactly what Synthetic draws.
const (
	streamTurns = iota + streamSampler + 1
	streamDelays
	streamShared  // the shared system prompt and the prefix pool
	streamContext // the user context prompts
	streamPrefix  // which prefix each conversation starts with
)

// memDataset is a dataset held in memory: synthetic conversations.
type memDataset struct {
	convs    []Conversation
	sampling string
	turns    int
}

// openSynthetic draws the synthetic conversations of o, AIPerf's way:
// turns per conversation ~ round(normal(TurnMean, TurnStddev)) ≥ 1, each
// turn a prompt of a drawn length cut from the corpus (as Synthetic), turns
// after the first delayed by round(normal(mean, stddev)) ≥ 1 ms × ratio
// when the mean delay is set; the shared system prompt, a user context
// per conversation, and a prefix from the pool before the first turn's
// prompt (joined by a space). With o.SeqDist each conversation's lengths
// are drawn from one bucket of the mixture, picked for it. A single-turn dataset's prompts are
// Synthetic's for the same options.
func openSynthetic(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	o.Entries = o.entries()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.Batch > 1 || o.Rankings != nil {
		return openInputs(ctx, tok, o)
	}
	ids, err := o.corpus(tok)
	if err != nil {
		return nil, err
	}
	stream := func(s uint64) *rand.Rand { return rand.New(rand.NewPCG(uint64(o.Seed), s)) }
	lengths, windows, turns, delays := stream(streamLengths), stream(streamWindows), stream(streamTurns), stream(streamDelays)
	shared, contexts, picks, mixture := stream(streamShared), stream(streamContext), stream(streamPrefix), stream(streamMixture)
	prompt := func(what string, r *rand.Rand, n int) (string, error) {
		text, err := exactPrompt(tok, ids, n, r)
		if err != nil {
			return "", fmt.Errorf("synthetic dataset: %s: %w", what, err)
		}
		return text, nil
	}
	var system string
	if o.SharedSystemLength > 0 {
		if system, err = prompt("shared system prompt", shared, o.SharedSystemLength); err != nil {
			return nil, err
		}
	}
	var prefixes []string
	for i := 0; o.PrefixLength > 0 && i < o.PrefixPoolSize; i++ {
		p, err := prompt(fmt.Sprintf("prefix prompt %d", i), shared, o.PrefixLength)
		if err != nil {
			return nil, err
		}
		prefixes = append(prefixes, p)
	}
	d := &memDataset{convs: make([]Conversation, o.Entries), sampling: samplingOr(o, SamplingShuffle)}
	for i := range d.convs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("synthetic conversations: stopped after %d of %d: %w", i, o.Entries, err)
		}
		c := Conversation{ID: fmt.Sprintf("conv-%d", i), System: system, Mode: DeltasWithoutResponses}
		if o.UserContextLength > 0 {
			if c.Context, err = prompt(fmt.Sprintf("user context %d", i), contexts, o.UserContextLength); err != nil {
				return nil, err
			}
		}
		l := o.lengthsOf(mixture)
		n := 1
		if o.TurnMean > 1 || o.TurnStddev > 0 {
			n = drawLength(turns, max(1, o.TurnMean), o.TurnStddev)
		}
		for k := range n {
			t := Turn{InputTokens: l.drawISL(lengths)}
			t.InputTokens = max(1, t.InputTokens-o.Template.of(k))
			if l.osl > 0 {
				t.MaxTokens = l.drawOSL(lengths)
			}
			if t.Text, err = prompt(fmt.Sprintf("conversation %d turn %d", i, k), windows, t.InputTokens); err != nil {
				return nil, err
			}
			if k == 0 && len(prefixes) > 0 {
				t.Text = prefixes[picks.IntN(len(prefixes))] + " " + t.Text
				t.InputTokens = tok.Count(t.Text)
			}
			if k > 0 && o.TurnDelayMeanMs > 0 {
				t.DelayMs = drawDelay(delays, o.TurnDelayMeanMs, o.TurnDelayStddevMs) * o.delayRatio()
			}
			c.Turns = append(c.Turns, t)
		}
		d.convs[i] = c
		d.turns += n
	}
	if err := d.attachMedia(ctx, o); err != nil {
		return nil, err
	}
	return d, nil
}

// drawDelay draws a think time in ms: mean when stddev is 0, else
// round(normal(mean, stddev)), at least 1.
func drawDelay(r *rand.Rand, mean, stddev float64) float64 {
	if stddev == 0 {
		return mean
	}
	return max(1, math.Round(mean+stddev*r.NormFloat64()))
}

func (d *memDataset) Len() int { return len(d.convs) }

// Conversation returns conversation i; its Turns are the caller's to change.
func (d *memDataset) Conversation(i int) (Conversation, error) {
	if i < 0 || i >= len(d.convs) {
		return Conversation{}, fmt.Errorf("conversation %d out of range [0, %d)", i, len(d.convs))
	}
	c := d.convs[i]
	c.Turns = slices.Clone(c.Turns)
	return c, nil
}

func (d *memDataset) Schedule() []Timed { return nil }
func (d *memDataset) Sampling() string  { return d.sampling }
func (d *memDataset) Close() error      { return nil }
func (d *memDataset) turnCount() int    { return d.turns }
