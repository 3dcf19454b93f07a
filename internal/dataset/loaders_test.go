package dataset

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

func o200k(t testing.TB) tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Load("o200k_base")
	require.NoError(t, err)
	return tok
}

// open opens o with o200k_base and reads every conversation back.
func open(t *testing.T, o Options) (Dataset, []Conversation) {
	t.Helper()
	d, err := Open(context.Background(), o200k(t), o)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	convs := make([]Conversation, d.Len())
	for i := range convs {
		convs[i], err = d.Conversation(i)
		require.NoError(t, err)
	}
	return d, convs
}

func texts(c Conversation) []string {
	var out []string
	for _, t := range c.Turns {
		out = append(out, t.Text)
	}
	return out
}

func TestSingleTurnFile(t *testing.T) {
	tok := o200k(t)
	d, convs := open(t, Options{InputFile: "testdata/files/single_turn.jsonl", OSLMean: 99})
	assert.Equal(t, SamplingSequential, d.Sampling())
	assert.Nil(t, d.Schedule(), "not every conversation starts at a timestamp")
	assert.Equal(t, 5, Turns(d))
	require.Len(t, convs, 4)

	assert.Equal(t, "single_turn.jsonl:1", convs[0].ID)
	assert.Equal(t, []string{"What is deep learning?"}, texts(convs[0]))
	assert.Equal(t, tok.Count("What is deep learning?"), convs[0].Turns[0].InputTokens)
	assert.Equal(t, 99, convs[0].Turns[0].MaxTokens, "--osl when the row has no output_length")
	assert.Equal(t, DeltasWithoutResponses, convs[0].Mode)

	assert.Equal(t, []string{"Who are you?\nHello world"}, texts(convs[1]), "texts are joined")
	assert.Equal(t, 20, convs[1].Turns[0].MaxTokens, "output_length wins over --osl")

	s1 := convs[2]
	assert.Equal(t, "s1", s1.ID)
	assert.Equal(t, MessageArrayWithResponses, s1.Mode, "rows sharing a session_id are self-contained")
	assert.Equal(t, []string{"first", "x one\nx two"}, texts(s1))
	assert.Equal(t, "user", s1.Turns[1].Role)
	assert.True(t, s1.Turns[1].HasTimestamp)
	assert.Equal(t, 2000.0, s1.Turns[1].TimestampMs)
	assert.Equal(t, map[string]any{"temperature": json.Number("0.5"), "seed": json.Number("12345678901234567890")}, s1.Turns[1].Extra,
		"extra keeps its numbers as written")
	body, err := json.Marshal(s1.Turns[1].Extra)
	require.NoError(t, err)
	assert.JSONEq(t, `{"temperature": 0.5, "seed": 12345678901234567890}`, string(body))

	assert.Equal(t, "single_turn.jsonl:6", convs[3].ID, "blank lines count")
	assert.Equal(t, 500.0, convs[3].Turns[0].DelayMs)
}

func TestMultiTurnFile(t *testing.T) {
	d, convs := open(t, Options{InputFile: "testdata/files/multi_turn.jsonl"})
	require.Len(t, convs, 3)
	assert.Equal(t, 5, Turns(d), "the hoisted system turn is not a request")
	c := convs[0]
	assert.Equal(t, "chat-1", c.ID)
	assert.Equal(t, "You are terse.", c.System, "a leading system turn is hoisted")
	assert.Equal(t, []string{"Hi", "More", "And more"}, texts(c), "lines repeating a session_id are concatenated")
	assert.Equal(t, DeltasWithoutResponses, c.Mode)
	assert.Equal(t, 2000.0, c.Turns[1].DelayMs)
	assert.Equal(t, 50, c.Turns[1].MaxTokens)
	assert.Equal(t, 5000.0, c.Turns[2].TimestampMs)
	assert.Equal(t, []string{"Alone"}, texts(convs[1]))
	assert.Equal(t, "", convs[2].System, "a lone system turn stays a turn")
	assert.Equal(t, []string{"Only system"}, texts(convs[2]))
	assert.Equal(t, "system", convs[2].Turns[0].Role)
	assert.Nil(t, d.Schedule())

	_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files/multi_turn.jsonl", FixedSchedule: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "multi_turn.jsonl:4: timestamp: the first turn of this conversation has no timestamp")
}

func TestMooncakeFile(t *testing.T) {
	tok := o200k(t)
	d, convs := open(t, Options{InputFile: "testdata/files/mooncake_sessions.jsonl", AutoOffset: true, Seed: 3, OSLMean: 77})
	assert.Equal(t, 8, Turns(d))
	require.Len(t, convs, 6)
	a := convs[0]
	assert.Equal(t, "a", a.ID)
	require.Len(t, a.Turns, 2)
	assert.Equal(t, 600, tok.Count(a.Turns[0].Text))
	assert.Equal(t, 1100, tok.Count(a.Turns[1].Text))
	assert.True(t, strings.HasPrefix(a.Turns[1].Text, a.Turns[0].Text), "blocks 1 and 2 are shared, and a cut block is the start of the full one")
	assert.Equal(t, 10, a.Turns[0].MaxTokens)
	assert.Equal(t, 77, a.Turns[1].MaxTokens, "no output_length: --osl")
	assert.Equal(t, 500.0, a.Turns[0].TimestampMs, "auto-offset: the first timestamp is 0")
	assert.Equal(t, 300.0, a.Turns[1].DelayMs)
	assert.Equal(t, DeltasWithoutResponses, a.Mode)

	assert.Equal(t, []string{"hello there"}, texts(convs[1]))
	assert.Equal(t, tok.Count("hello there"), convs[1].Turns[0].InputTokens)

	m := convs[2]
	assert.Equal(t, "mooncake_sessions.jsonl:4", m.ID)
	assert.Equal(t, MessageArrayWithResponses, m.Mode)
	assert.JSONEq(t, `[{"role": "user", "content": "hi there"}]`, string(m.Turns[0].Messages))
	assert.JSONEq(t, `[{"type": "function", "function": {"name": "f"}}]`, string(m.Turns[0].Tools))
	assert.Equal(t, tok.Count("hi there"), m.Turns[0].InputTokens)

	p := convs[3]
	assert.Equal(t, MessageArrayWithResponses, p.Mode)
	assert.Zero(t, p.Turns[0].MaxTokens, "a payload is sent as it is: no --osl draw")
	assert.JSONEq(t, `{"messages": [{"role": "user", "content": "raw body"}], "max_tokens": 7}`, string(p.Turns[0].Payload))
	assert.Equal(t, tok.Count("raw body"), p.Turns[0].InputTokens)

	delta := convs[4]
	assert.Equal(t, DeltasWithoutResponses, delta.Mode, "delta messages accumulate with the live replies")
	assert.Equal(t, tok.Count("two"), delta.Turns[1].InputTokens, "text parts are counted")

	assert.Equal(t, map[string]any{"nvext": map[string]any{"ignore_eos": true}}, convs[5].Turns[0].Extra)

	assert.Equal(t, []Timed{{1, 0}, {0, 500}, {2, 1500}, {3, 2500}, {4, 3500}, {5, 5500}}, d.Schedule())
}

func TestRandomPoolFile(t *testing.T) {
	d, convs := open(t, Options{InputFile: "testdata/files/random_pool.jsonl", Entries: 30, Seed: 5})
	assert.Equal(t, SamplingShuffle, d.Sampling())
	assert.Equal(t, 30, Turns(d))
	seen := map[string]int{}
	for _, c := range convs {
		require.Len(t, c.Turns, 1)
		seen[c.Turns[0].Text]++
	}
	assert.Len(t, seen, 3, "30 draws with replacement from 3 rows use every row")
	assert.Contains(t, seen, "pool three a\npool three b")
	assert.Equal(t, "random_pool.jsonl#7", convs[7].ID)

	_, again := open(t, Options{InputFile: "testdata/files/random_pool.jsonl", Entries: 30, Seed: 5})
	assert.Equal(t, convs, again, "same seed, same draws")
}

func TestRandomPoolDirectory(t *testing.T) {
	d, convs := open(t, Options{InputFile: "testdata/files/random_pool_dir", Conversations: 12, Seed: 2})
	require.Equal(t, 12, d.Len(), "--conversation-num sizes the pool when entries are unset")
	for _, c := range convs {
		passage, query, ok := strings.Cut(c.Turns[0].Text, "\n")
		require.True(t, ok, "one text from each pool: %q", c.Turns[0].Text)
		assert.Contains(t, []string{"I am a cat.", "I am a dog."}, passage, "pools in file name order")
		assert.Contains(t, []string{"Who are you?", "What is the meaning of life?", "Why?"}, query)
	}
	_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files/random_pool_dir", CustomType: TypeSingleTurn})
	require.ErrorContains(t, err, "only random_pool (one pool per file), raw_payload (one conversation per file) and weka_trace (one trace per file) read a directory")
}

func TestShareGPTFile(t *testing.T) {
	tok := o200k(t)
	d, convs := open(t, Options{InputFile: "testdata/files/sharegpt.json", PublicDataset: PublicShareGPT})
	assert.Equal(t, SamplingSequential, d.Sampling())
	require.Len(t, convs, 3, "the too-short and one-message entries are dropped")
	assert.Equal(t, []string{"Tell me about the refraction of light through a prism, please.", "And what happens when it leaves the prism again?"}, texts(convs[0]))
	assert.Equal(t, tok.Count("It bends once more, so the colours spread further apart into a spectrum."), convs[0].Turns[1].MaxTokens,
		"max tokens is the recorded completion's length")
	assert.Equal(t, tok.Count("And what happens when it leaves the prism again?"), convs[0].Turns[1].InputTokens)
	assert.Equal(t, DeltasWithoutResponses, convs[0].Mode)
	assert.Equal(t, []string{"Summarise the experiment with two prisms in a sentence."}, texts(convs[1]), "without roles: the first two values")
	assert.Equal(t, []string{"Why is the sky blue during the day and red at dusk?"}, texts(convs[2]), "a leading gpt message is skipped")
	assert.Equal(t, 4, Turns(d))
}

func TestDetect(t *testing.T) {
	cases := map[string]Detected{
		"testdata/files/single_turn.jsonl":       {TypeSingleTurn, false},
		"testdata/files/multi_turn.jsonl":        {TypeMultiTurn, false},
		"testdata/files/mooncake_sessions.jsonl": {TypeMooncakeTrace, true},
		"testdata/files/random_pool.jsonl":       {TypeRandomPool, false},
		"testdata/files/random_pool_dir":         {TypeRandomPool, false},
		head200:                                  {TypeMooncakeTrace, true},
	}
	for path, want := range cases {
		got, err := Detect(path, "")
		require.NoError(t, err, path)
		assert.Equal(t, want, got, path)
	}
	got, err := Detect("testdata/files/random_pool_dir/queries.jsonl", TypeRandomPool)
	require.NoError(t, err)
	assert.Equal(t, TypeRandomPool, got.Type, "a given type is kept")
	_, err = Detect("testdata/files/random_pool_dir", TypeMooncakeTrace)
	assert.ErrorContains(t, err, "only random_pool (one pool per file), raw_payload (one conversation per file) and weka_trace (one trace per file) read a directory")
	_, err = Detect("testdata/files/nope.jsonl", "")
	assert.ErrorContains(t, err, "is not a valid file or directory")
}

func TestSamplingOverride(t *testing.T) {
	d, _ := open(t, Options{InputFile: "testdata/files/single_turn.jsonl", Sampling: SamplingRandom})
	assert.Equal(t, SamplingRandom, d.Sampling())
}

func TestMultiTurnSystemLineThenTurns(t *testing.T) {
	path := writeFile(t, "hoist.jsonl",
		`{"session_id": "x", "turns": [{"role": "system", "text": "Be brief."}]}`,
		`{"session_id": "y", "turns": [{"text": "other", "timestamp": 1}]}`,
		`{"session_id": "x", "turns": [{"text": "hi", "timestamp": 3}, {"text": "bye", "timestamp": 4}]}`)
	d, convs := open(t, Options{InputFile: path, FixedSchedule: true})
	require.Len(t, convs, 2)
	assert.Equal(t, "Be brief.", convs[0].System, "the system line is hoisted once the session has more turns")
	assert.Equal(t, []string{"hi", "bye"}, texts(convs[0]))
	assert.Equal(t, 3, Turns(d))
	assert.Equal(t, []Timed{{1, 1}, {0, 3}}, d.Schedule(), "x starts at its first sent turn's timestamp")
}

func TestBailianFile(t *testing.T) {
	tok := o200k(t)
	d, convs := open(t, Options{InputFile: "testdata/files/bailian.jsonl", CustomType: TypeBailianTrace, Seed: 3, OSLMean: 77})
	assert.True(t, IsTrace(d))
	assert.Equal(t, SamplingSequential, d.Sampling())
	assert.Equal(t, 5, Turns(d))
	require.Len(t, convs, 3, "159 → 160 → 161 is one session; 200 and the orphan 300 are their own")

	s := convs[0]
	assert.Equal(t, "159", s.ID, "a session is named by its root chat_id")
	assert.Equal(t, MessageArrayWithResponses, s.Mode, "each row is the whole request: sent on its own")
	require.Len(t, s.Turns, 3)
	for k, want := range []struct{ isl, osl int }{{40, 12}, {60, 8}, {70, 9}} {
		assert.Equal(t, want.isl, s.Turns[k].InputTokens)
		assert.Equal(t, want.isl, tok.Count(s.Turns[k].Text), "turn %d: input_length tokens", k)
		assert.Equal(t, want.osl, s.Turns[k].MaxTokens, "output_length, not --osl")
	}
	assert.Equal(t, []float64{500, 2250, 3000}, []float64{s.Turns[0].TimestampMs, s.Turns[1].TimestampMs, s.Turns[2].TimestampMs},
		"seconds become milliseconds")
	assert.True(t, strings.HasPrefix(s.Turns[1].Text, s.Turns[0].Text[:len(s.Turns[0].Text)/2]),
		"16-token hash blocks: the shared ids 1089 and 1090 give the same text")

	assert.Equal(t, "200", convs[1].ID)
	assert.Equal(t, "300", convs[2].ID, "a parent not in the file: the row is its own root, as AIPerf")
	assert.Equal(t, []Timed{{0, 500}, {1, 1000}, {2, 3500}}, d.Schedule())

	det, err := Detect("testdata/files/bailian.jsonl", "")
	require.NoError(t, err)
	assert.Equal(t, Detected{Type: TypeBailianTrace, Timestamped: true}, det, "detected by its chat_id, as AIPerf's can_load")
}

func TestInputsJSONFile(t *testing.T) {
	tok := o200k(t)
	d, convs := open(t, Options{InputFile: "testdata/files/inputs.json"})
	assert.True(t, IsTrace(d), "every session once")
	assert.Equal(t, 3, Turns(d))
	assert.Nil(t, d.Schedule())
	require.Len(t, convs, 2)
	s := convs[0]
	assert.Equal(t, "session-001", s.ID)
	assert.Equal(t, MessageArrayWithResponses, s.Mode, "each payload holds its whole history")
	require.Len(t, s.Turns, 2)
	assert.Equal(t, `{"messages":[{"role":"user","content":"Hello"}],"model":"Qwen/Qwen3-0.6B","max_tokens":1024}`, string(s.Turns[0].Payload),
		"AIPerf's pretty-printed payload, compacted: the bytes its run sent")
	assert.Equal(t, tok.Count("Hello")+tok.Count("Hi there!")+tok.Count("How are you?"), s.Turns[1].InputTokens)
	assert.Zero(t, s.Turns[0].MaxTokens, "sent as it is")
	assert.Equal(t, `{"prompt":"once upon a time","max_tokens":5,"temperature":0.50}`, string(convs[1].Turns[0].Payload),
		"numbers and key order as written")

	det, err := Detect("testdata/files/inputs.json", "")
	require.NoError(t, err)
	assert.Equal(t, Detected{Type: TypeInputsJSON}, det, "a .json file with data[0].payloads, as AIPerf's can_load")
}

func TestBurstGPTFile(t *testing.T) {
	tok := o200k(t)
	d, convs := open(t, Options{InputFile: "testdata/files/burstgpt.csv", OSLMean: 99})
	assert.True(t, IsTrace(d))
	assert.Equal(t, 3, Turns(d), "the header is not a request")
	require.Len(t, convs, 3, "each row a request on its own")
	for k, want := range []struct{ isl, osl int }{{512, 128}, {300, 80}, {200, 0}} {
		c := convs[k]
		require.Len(t, c.Turns, 1)
		assert.Equal(t, want.isl, tok.Count(c.Turns[0].Text), "row %d: Request tokens", k)
		assert.Equal(t, want.isl, c.Turns[0].InputTokens)
		assert.Equal(t, want.osl, c.Turns[0].MaxTokens, "row %d: Response tokens (0: no max tokens, as AIPerf), never --osl", k)
	}
	assert.Equal(t, "burstgpt.csv:2", convs[0].ID)
	assert.Equal(t, []Timed{{0, 123}, {1, 456}, {2, 1200}}, d.Schedule(), "seconds become milliseconds")

	det, err := Detect("testdata/files/burstgpt.csv", "")
	require.NoError(t, err)
	assert.Equal(t, Detected{Type: TypeBurstGPTTrace, Timestamped: true}, det, "detected by its header, as AIPerf's can_load")
}

func TestRawPayloadFile(t *testing.T) {
	tok := o200k(t)
	d, convs := open(t, Options{InputFile: "testdata/files/raw_payload.jsonl", CustomType: TypeRawPayload})
	assert.True(t, IsTrace(d), "every line once")
	require.Len(t, convs, 2, "each line a conversation of one turn")
	assert.Equal(t, `{"messages":[{"role":"user","content":"What is machine learning?"}],"model":"Qwen/Qwen3-0.6B","max_tokens":100}`,
		string(convs[0].Turns[0].Payload), "sent as written (compacted)")
	assert.Equal(t, `{"messages":[{"role":"user","content":"Explain neural networks."}],"model":"Qwen/Qwen3-0.6B","temperature":0.70}`,
		string(convs[1].Turns[0].Payload))
	assert.Equal(t, tok.Count("What is machine learning?"), convs[0].Turns[0].InputTokens)
	assert.Equal(t, MessageArrayWithResponses, convs[0].Mode)

	_, err := Detect("testdata/files/raw_payload.jsonl", "")
	require.ErrorContains(t, err, "multiple loaders can handle the data format: mooncake_trace and raw_payload",
		"a body with messages is also a mooncake messages row, as in AIPerf: the type must be given")
}

func TestRawPayloadDirectory(t *testing.T) {
	d, convs := open(t, Options{InputFile: "testdata/files/raw_payload_dir"})
	assert.True(t, IsTrace(d))
	assert.Equal(t, 3, Turns(d))
	require.Len(t, convs, 2, "one conversation per .jsonl file with payloads, in name order")
	assert.Equal(t, "session_001", convs[0].ID)
	require.Len(t, convs[0].Turns, 2, "its lines are its turns")
	assert.Contains(t, string(convs[0].Turns[1].Payload), `"Show me a hello world example."`)
	assert.Equal(t, MessageArrayWithResponses, convs[0].Mode)
	assert.Equal(t, "session_002", convs[1].ID)

	det, err := Detect("testdata/files/raw_payload_dir", "")
	require.NoError(t, err)
	assert.Equal(t, TypeRawPayload, det.Type, "a directory of payload files, as AIPerf's can_load")
}

func TestSageMakerCaptureFile(t *testing.T) {
	tok := o200k(t)
	d, convs := open(t, Options{InputFile: "testdata/files/sagemaker.jsonl", OSLMean: 99})
	assert.True(t, IsTrace(d))
	require.Len(t, convs, 3, "each capture a request on its own")
	a := convs[0]
	assert.JSONEq(t, `[{"role":"user","content":"What is AI?"}]`, string(a.Turns[0].Messages), "the captured messages, sent as they are")
	assert.Equal(t, tok.Count("What is AI?"), a.Turns[0].InputTokens)
	assert.Equal(t, 50, a.Turns[0].MaxTokens, "the captured max_tokens")
	assert.Equal(t, MessageArrayWithResponses, a.Mode)
	b := convs[1]
	assert.JSONEq(t, `[{"role":"user","content":"Tell me a joke."}]`, string(b.Turns[0].Messages), "BASE64, the default encoding")
	assert.JSONEq(t, `[{"type":"function","function":{"name":"f"}}]`, string(b.Turns[0].Tools))
	assert.Equal(t, 20, b.Turns[0].MaxTokens, "max_completion_tokens when there is no max_tokens")
	assert.Equal(t, 99, convs[2].Turns[0].MaxTokens, "neither: --osl")
	assert.Equal(t, []Timed{{1, 0}, {0, 500}, {2, 1500}}, d.Schedule(),
		"zero-aligned on the first request (00:03:17.5, a time without a zone is UTC); +02:00 honoured")

	det, err := Detect("testdata/files/sagemaker.jsonl", "")
	require.NoError(t, err)
	assert.Equal(t, Detected{Type: TypeSageMakerCapture, Timestamped: true}, det, "detected by captureData and eventMetadata")
}

// A Bailian follow-up listed before its parent joins the parent's session
// when the parent comes, as AIPerf groups the whole file: the session is
// sent in turn order and starts at its first turn; a parent that never
// comes leaves the follow-up its own session.
func TestBailianParentAfterFollowUp(t *testing.T) {
	path := writeFile(t, "bailian.jsonl",
		`{"chat_id": 7, "parent_chat_id": 8, "timestamp": 2, "input_length": 32, "output_length": 2, "turn": 2}`,
		`{"chat_id": 9, "parent_chat_id": 7, "timestamp": 3, "input_length": 48, "output_length": 2, "turn": 3}`,
		`{"chat_id": 5, "parent_chat_id": 4, "timestamp": 1, "input_length": 16, "output_length": 2, "turn": 2}`,
		`{"chat_id": 8, "parent_chat_id": -1, "timestamp": 1.5, "input_length": 16, "output_length": 2, "turn": 1}`,
		`{"chat_id": 10, "parent_chat_id": 9, "timestamp": 4, "input_length": 64, "output_length": 2, "turn": 4}`)
	for _, sample := range []float64{0, 1} {
		d, convs := open(t, Options{InputFile: path, CustomType: TypeBailianTrace, FixedSchedule: true,
			Replay: Replay{SampleRatio: sample}})
		require.Len(t, convs, 2)
		assert.Equal(t, 5, Turns(d))
		s := convs[0]
		assert.Equal(t, "8", s.ID, "named by its root")
		var isl []int
		var at []float64
		for _, turn := range s.Turns {
			isl, at = append(isl, turn.InputTokens), append(at, turn.TimestampMs)
		}
		assert.Equal(t, []int{16, 32, 48, 64}, isl, "turn order")
		assert.Equal(t, []float64{1500, 2000, 3000, 4000}, at)
		assert.Equal(t, "5", convs[1].ID, "its parent 4 is not in the file")
		assert.Equal(t, []Timed{{1, 1000}, {0, 1500}}, d.Schedule(), "sessions in the order of their first rows")
	}
}
