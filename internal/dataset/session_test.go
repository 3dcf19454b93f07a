package dataset

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSyntheticSingleTurnIsSynthetic(t *testing.T) {
	for name, tok := range tokenizers(t) {
		t.Run(name, func(t *testing.T) {
			o := Options{ISLMean: 64, ISLStddev: 20, OSLMean: 100, OSLStddev: 30, Entries: 25, Seed: 42}
			entries, err := Synthetic(context.Background(), tok, o)
			require.NoError(t, err)
			d, err := Open(context.Background(), tok, o)
			require.NoError(t, err)
			require.Equal(t, len(entries), d.Len())
			assert.Equal(t, SamplingShuffle, d.Sampling(), "AIPerf's default for synthetic data, and today's")
			assert.Nil(t, d.Schedule())
			assert.Equal(t, 25, Turns(d))
			for i, e := range entries {
				c, err := d.Conversation(i)
				require.NoError(t, err)
				assert.Equal(t, []Turn{{Text: e.Prompt, InputTokens: e.InputTokens, MaxTokens: e.MaxTokens}}, c.Turns, "conversation %d", i)
				assert.Equal(t, DeltasWithoutResponses, c.Mode)
				assert.Empty(t, c.System)
				assert.Empty(t, c.Context)
			}
		})
	}
}

func conversations(t *testing.T, o Options) []Conversation {
	t.Helper()
	d, err := Open(context.Background(), o200k(t), o)
	require.NoError(t, err)
	convs := make([]Conversation, d.Len())
	for i := range convs {
		convs[i], err = d.Conversation(i)
		require.NoError(t, err)
	}
	return convs
}

func TestSyntheticSessions(t *testing.T) {
	tok := o200k(t)
	o := Options{ISLMean: 30, Entries: 20, Seed: 7, TurnMean: 5, TurnDelayMeanMs: 2000, TurnDelayRatio: ptr(0.5),
		SharedSystemLength: 100, UserContextLength: 50}
	convs := conversations(t, o)
	require.Len(t, convs, 20)
	contexts := map[string]bool{}
	ids := map[string]bool{}
	for i, c := range convs {
		require.Len(t, c.Turns, 5, "conversation %d", i)
		assert.Equal(t, convs[0].System, c.System, "one system prompt shared by all")
		assert.Equal(t, 100, tok.Count(c.System))
		assert.Equal(t, 50, tok.Count(c.Context))
		contexts[c.Context] = true
		ids[c.ID] = true
		assert.Equal(t, DeltasWithoutResponses, c.Mode)
		for k, turn := range c.Turns {
			assert.Equal(t, 30, tok.Count(turn.Text))
			if k == 0 {
				assert.Zero(t, turn.DelayMs, "the first turn has no delay")
			} else {
				assert.Equal(t, 1000.0, turn.DelayMs, "mean × ratio")
			}
		}
	}
	assert.Len(t, contexts, 20, "a distinct user context per conversation")
	assert.Len(t, ids, 20)
	assert.Equal(t, convs, conversations(t, o), "same seed, same conversations")

	o.TurnStddev, o.TurnDelayStddevMs = 2, 500
	varied := conversations(t, o)
	lengths, delays := map[int]bool{}, map[float64]bool{}
	for _, c := range varied {
		require.NotEmpty(t, c.Turns)
		lengths[len(c.Turns)] = true
		for _, turn := range c.Turns[1:] {
			assert.GreaterOrEqual(t, turn.DelayMs, 0.5)
			delays[turn.DelayMs] = true
		}
	}
	assert.Greater(t, len(lengths), 2, "turn counts are drawn")
	assert.Greater(t, len(delays), 10, "delays are drawn")

	o.Seed = 8
	other := conversations(t, o)
	assert.NotEqual(t, varied[0].System, other[0].System, "another seed, another system prompt")
}

// Under --apply-chat-template a synthetic turn is shorter by the template's
// share: the first by the request's, each later one by a message's, at
// least 1 token left.
func TestSyntheticTemplateOverhead(t *testing.T) {
	tok := o200k(t)
	o := Options{ISLMean: 30, Entries: 5, Seed: 7, TurnMean: 3, Template: TemplateOverhead{First: 12, Later: 4}}
	for _, c := range conversations(t, o) {
		require.Len(t, c.Turns, 3)
		for k, turn := range c.Turns {
			want := map[bool]int{true: 18, false: 26}[k == 0]
			assert.Equal(t, want, turn.InputTokens)
			assert.Equal(t, want, tok.Count(turn.Text))
		}
	}
	o.Template.First = 40
	for _, c := range conversations(t, o) {
		assert.Equal(t, 1, c.Turns[0].InputTokens, "at least one token")
	}
}

func TestSyntheticPrefixPool(t *testing.T) {
	tok := o200k(t)
	convs := conversations(t, Options{ISLMean: 20, Entries: 30, Seed: 1, TurnMean: 2, PrefixPoolSize: 3, PrefixLength: 40})
	var prefixes []string // one first text per prefix seen
	for _, c := range convs {
		first := c.Turns[0]
		assert.Equal(t, tok.Count(first.Text), first.InputTokens)
		assert.InDelta(t, 61, first.InputTokens, 2, "prefix + space + prompt")
		assert.Equal(t, 20, c.Turns[1].InputTokens, "only the first turn gets a prefix")
		known := false
		for _, p := range prefixes {
			known = known || commonPrefix([]byte(p), []byte(first.Text)) > 100
		}
		if !known {
			prefixes = append(prefixes, first.Text)
		}
	}
	assert.Len(t, prefixes, 3, "every conversation starts with one of the pool's 3 prefixes")
}

func TestSyntheticConversationCount(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want int
	}{
		{Options{ISLMean: 2, Conversations: 7}, 7},
		{Options{ISLMean: 2, Entries: 5, Conversations: 7}, 5},
		{Options{ISLMean: 2}, DefaultEntries},
	} {
		d, err := Open(context.Background(), o200k(t), c.o)
		require.NoError(t, err)
		assert.Equal(t, c.want, d.Len())
	}
}
