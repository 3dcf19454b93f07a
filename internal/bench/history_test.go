package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// convs is a Dataset of conversations in memory.
type convs []dataset.Conversation

func (c convs) Len() int                                         { return len(c) }
func (c convs) Conversation(i int) (dataset.Conversation, error) { return c[i], nil }
func (c convs) Schedule() []dataset.Timed                        { return nil }
func (c convs) Sampling() string                                 { return dataset.SamplingSequential }
func (c convs) Close() error                                     { return nil }

// checkHistory refuses a conversation of history, or with a system
// message, for the types that send a prompt only; the types that carry
// messages, and audio_transcription (which uploads the current turn's
// audio), take it.
func TestCheckHistory(t *testing.T) {
	two := convs{{ID: "a", Mode: dataset.DeltasWithoutResponses, Turns: []dataset.Turn{{Text: "x"}, {Text: "y"}}}}
	sys := convs{{ID: "b", Mode: dataset.DeltasWithoutResponses, System: "be brief", Turns: []dataset.Turn{{Text: "x"}}}}
	selfContained := convs{{ID: "c", Mode: dataset.MessageArrayWithResponses, Turns: []dataset.Turn{{Text: "x"}, {Text: "y"}}}}
	dag := convs{{ID: "d", DAG: true, Mode: dataset.MessageArrayWithResponses, Turns: []dataset.Turn{{Messages: []byte(`[{"role":"user","content":"x"}]`)}}}}
	for et, refused := range map[string]bool{plan.EndpointCompletions: true, plan.EndpointTemplate: true, plan.EndpointEmbeddings: true,
		plan.EndpointChat: false, plan.EndpointResponses: false, plan.EndpointAudioTranscription: false} {
		p := plan.Profile{EndpointType: et, InputFile: "f.jsonl"}
		for _, ds := range []convs{two, sys, dag} {
			err := checkHistory(context.Background(), p, ds)
			if refused {
				assert.ErrorContains(t, err, "--endpoint-type "+et+" sends a prompt: use chat, responses or messages", et)
			} else {
				assert.NoError(t, err, et)
			}
		}
		assert.NoError(t, checkHistory(context.Background(), p, selfContained), "%s: self-contained turns are prompts", et)
	}
}
