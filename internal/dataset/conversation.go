package dataset

import (
	"encoding/json"

	"github.com/aiperf-go/aiperf/internal/media"
)

// Context modes: how the requests of a conversation carry its history
// (AIPerf's conversation context modes).
const (
	// DeltasWithoutResponses accumulates the history: request k carries every
	// earlier turn's message interleaved with the server's live replies,
	// then turn k. AIPerf's default (synthetic, multi_turn, ShareGPT,
	// mooncake rows synthesised from input_length or text_input).
	DeltasWithoutResponses = "deltas_without_responses"
	// MessageArrayWithResponses sends each turn self-contained: its own
	// Messages (or Payload, or Text) only; the live reply is discarded
	// (mooncake messages/payload rows, single_turn rows sharing a
	// session_id).
	MessageArrayWithResponses = "message_array_with_responses"
)

// Conversation is one conversation of a dataset: the template a session
// replays. A single-turn request is a conversation of one turn.
type Conversation struct {
	// ID is the dataset's session_id, or a generated one; exported as
	// conversation_id and in inputs.json.
	ID string
	// System is a system message sent first on every request of the
	// conversation ("" for none): --shared-system-prompt-length, or a
	// leading system turn of a multi_turn file.
	System string
	// Context is a user message sent right after System on every request
	// ("" for none): --user-context-prompt-length.
	Context string
	// Turns are the conversation's requests, in order (at least one).
	Turns []Turn
	// Mode is DeltasWithoutResponses or MessageArrayWithResponses.
	Mode string
	// ModelRanked: each turn names its model by ModelRank rather than the
	// session's --model (a weka_trace's per-trace model rewriting).
	ModelRanked bool
	// DAG marks a dag_jsonl conversation: its turns' messages are threaded
	// with the live replies (in DeltasWithoutResponses) even when it has
	// one turn, since the conversations it forks inherit them.
	DAG bool
	// PreSpawns are the conversations (Tree nodes) started, each from an
	// empty history, right before turn 0 is sent (dag_jsonl's
	// pre_session_spawns); nobody waits for them.
	PreSpawns []int
	// Think, on an orchestrator conversation (whose turns are NoRequest
	// rounds), draws each turn's delay per session from a lognormal whose
	// median is the turn's DelayMs; nil: the delays as they are.
	Think *ThinkTime
}

// ThinkTime is an orchestrator's think-time distribution (dag_jsonl's
// think_time_sigma, think_time_min_ms, think_time_max_ms): a round's
// delay is DelayMs × e^(Sigma·Z), Z standard normal, clamped to
// [MinMs, MaxMs] (a bound of 0: none).
type ThinkTime struct {
	Sigma, MinMs, MaxMs float64
}

// Branch is a conversation a dag_jsonl turn starts once it returned: one
// of AIPerf's FORK or SPAWN children.
type Branch struct {
	// Node is the child conversation (Tree.Node).
	Node int
	// Fork: the child starts from the parent's history so far, the live
	// reply to this turn included (FORK); else from nothing (SPAWN).
	Fork bool
	// JoinAt is the parent's turn that waits until the child's session has
	// ended (AIPerf's SPAWN_JOIN); 0 for none.
	JoinAt int
}

// Tree is a dataset of conversations that start one another (dag_jsonl).
// Len and Conversation are its roots, the conversations no other starts,
// which the sampler draws: nodes 0 to Len()-1. Node reads any
// conversation of it, roots first.
type Tree interface {
	Dataset
	// Nodes is the number of conversations, roots and children.
	Nodes() int
	// Node materialises conversation i (0 ≤ i < Nodes()).
	Node(i int) (Conversation, error)
}

// Nodes is the number of conversations of d, a Tree's branches included.
func Nodes(d Dataset) int {
	if t, ok := d.(Tree); ok {
		return t.Nodes()
	}
	return d.Len()
}

// Turn is one request of a conversation. Exactly one of Text (with
// Inputs), Query (with Passages), Messages and Payload carries its input.
type Turn struct {
	// Text is the user message of this turn (synthetic, from a file, or
	// synthesised from hash ids).
	Text string
	// Role is the message role of Text ("" means user).
	Role string
	// InputTokens is the client tokenizer's count of Text (of the whole
	// turn's text input for Messages; 0 for Payload when unknown).
	InputTokens int
	// MaxTokens is the output length asked for (output_length or --osl); 0
	// sends no max-tokens field.
	MaxTokens int
	// Messages is an OpenAI messages array sent as it is (mooncake
	// messages rows).
	Messages json.RawMessage
	// Payload is a whole request body sent as it is (mooncake payload rows).
	Payload json.RawMessage
	// Inputs are the texts of a batched embeddings turn
	// (--prompt-batch-size > 1); Text is then their first.
	Inputs []string
	// Query and Passages are a rankings turn's (Text is then empty).
	Query    string
	Passages []string
	// Media are the turn's images, audios and videos, sent as content
	// parts after its text (shared, read-only).
	Media []media.Item
	// Tools is the turn's tools array, sent as "tools" (mooncake).
	Tools json.RawMessage
	// Extra is shallow-merged into the request body over --extra-inputs.
	Extra map[string]any
	// TimestampMs is when the turn is sent, in ms from the schedule's zero
	// (fixed schedule), when HasTimestamp.
	TimestampMs  float64
	HasTimestamp bool
	// DelayMs is the wait after the previous turn's reply before this turn
	// is sent (turns after the first).
	DelayMs float64
	// ModelRank, in a ModelRanked conversation, picks the turn's model:
	// --model number ModelRank modulo their number.
	ModelRank int
	// Model is the model the turn names over the session's (a dag_jsonl
	// turn's "model"); "" for the session's.
	Model string
	// Branches are the conversations this turn starts once it returned
	// (dag_jsonl's forks and spawns).
	Branches []Branch
	// NoRequest: the turn sends nothing and only starts its Branches (a
	// round of a dag_jsonl orchestrator conversation).
	NoRequest bool
	// Join lists the conversations (indices) whose sessions must have sent
	// their last turn before this turn is sent: a weka_trace's subagents,
	// which the main agent's next call waits for (AIPerf's SPAWN_JOIN).
	Join []int
}

// Dataset is the conversations of a run. Conversations may be materialised
// lazily: a trace file is indexed when it is opened and read back row by
// row as it is replayed, so a large trace costs memory for what is in
// flight, the index and the prompts' shared blocks, not the whole file.
// A Dataset is safe for concurrent use.
type Dataset interface {
	// Len is the number of conversations.
	Len() int
	// Conversation materialises conversation i (0 ≤ i < Len()).
	Conversation(i int) (Conversation, error)
	// Schedule lists, for a dataset whose first turns carry timestamps,
	// every conversation's first-turn time in ascending order (ms from the
	// schedule's zero, offsets and auto-offset applied); nil otherwise.
	Schedule() []Timed
	// Sampling is the sampling strategy AIPerf uses for this kind of data
	// when --dataset-sampling-strategy is not given.
	Sampling() string
	// Close releases the dataset's files.
	Close() error
}

// Timed is one entry of a fixed schedule: conversation Conv starts at AtMs.
type Timed struct {
	Conv int
	AtMs float64
}

// Sampling strategies (--dataset-sampling-strategy).
const (
	SamplingSequential = "sequential"
	SamplingRandom     = "random"
	SamplingShuffle    = "shuffle"
)
