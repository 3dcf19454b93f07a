package dataset

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const speedBenchFile = "testdata/files/speed_bench.jsonl"

// A SPEED-Bench file's rows are conversations keyed by question_id, their
// messages the turns in order, each under its role; a leading system
// message is the conversation's system message, as a multi_turn file's
// leading system turn is (AIPerf's SpeedBenchLoader is its multi-turn
// loader), so that no request is a system message alone.
func TestSpeedBenchFile(t *testing.T) {
	tok := o200k(t)
	d, convs := open(t, Options{InputFile: speedBenchFile, CustomType: "speed_bench_qualitative", OSLMean: 12})
	assert.Equal(t, "speed_bench_qualitative", Kind(d))
	assert.Equal(t, SamplingSequential, d.Sampling(), "AIPerf's multi-turn loader's preferred order")
	assert.Nil(t, d.Schedule(), "SPEED-Bench rows have no timestamps")
	assert.False(t, IsTrace(d))
	assert.Equal(t, 5, Turns(d), "six messages, one of them hoisted")
	require.Equal(t, []string{"5a1e3f0c9b2d4e6f8a7b1c2d3e4f5a6b", "6b2f4a1d0c3e5f7a9b8c2d3e4f5a6b7c",
		"7c3a5b2e1d4f6a8b0c9d3e4f5a6b7c8d", "8d4b6c3f2e5a7b9c1d0e4f5a6b7c8d9e"}, convIDs(convs), "every row, whatever its category")

	c := convs[2]
	assert.Equal(t, DeltasWithoutResponses, c.Mode, "each turn re-sends the conversation so far")
	assert.Equal(t, "You are a careful Go reviewer.", c.System, "the leading system message is hoisted")
	require.Len(t, c.Turns, 2)
	assert.Equal(t, []string{"Explain what a select statement does.", "Now add a timeout to it."}, texts(c))
	for k, role := range []string{"user", "user"} {
		assert.Equal(t, role, c.Turns[k].Role, "turn %d", k)
		assert.Equal(t, tok.Count(c.Turns[k].Text), c.Turns[k].InputTokens, "turn %d", k)
		assert.Equal(t, 12, c.Turns[k].MaxTokens, "--osl: SPEED-Bench rows have no output length")
		assert.False(t, c.Turns[k].HasTimestamp)
		assert.Zero(t, c.Turns[k].DelayMs)
	}
}

// A per-category type keeps the rows of its category, as AIPerf's plugin
// metadata filters them; the whole splits keep every row.
func TestSpeedBenchCategories(t *testing.T) {
	for kind, want := range map[string][]string{
		"speed_bench_coding":              {"5a1e3f0c9b2d4e6f8a7b1c2d3e4f5a6b", "7c3a5b2e1d4f6a8b0c9d3e4f5a6b7c8d"},
		"speed_bench_math":                {"6b2f4a1d0c3e5f7a9b8c2d3e4f5a6b7c"},
		"speed_bench_throughput_8k_mixed": {"8d4b6c3f2e5a7b9c1d0e4f5a6b7c8d9e"},
		"speed_bench_throughput_1k": {"5a1e3f0c9b2d4e6f8a7b1c2d3e4f5a6b", "6b2f4a1d0c3e5f7a9b8c2d3e4f5a6b7c",
			"7c3a5b2e1d4f6a8b0c9d3e4f5a6b7c8d", "8d4b6c3f2e5a7b9c1d0e4f5a6b7c8d9e"},
	} {
		d, convs := open(t, Options{InputFile: speedBenchFile, CustomType: kind})
		assert.Equal(t, want, convIDs(convs), kind)
		assert.Equal(t, kind, Kind(d))
	}
	_, convs := open(t, Options{InputFile: speedBenchFile, CustomType: "speed_bench_coding"})
	assert.Len(t, convs[1].Turns, 2, "a kept row's turns are all its messages but the hoisted system message")
}

// The 32 types (the qualitative split, its 11 domains, 5 throughput splits
// and their 15 tiers), and the category each keeps.
func TestSpeedBenchTypes(t *testing.T) {
	require.Len(t, SpeedBenchTypes, 1+11+5+5*3)
	for kind, want := range map[string]string{
		"speed_bench_qualitative": "", "speed_bench_coding": "coding", "speed_bench_summarization": "summarization",
		"speed_bench_throughput_32k": "", "speed_bench_throughput_1k_low_entropy": "low_entropy",
		"speed_bench_throughput_16k_high_entropy": "high_entropy", "speed_bench_throughput_2k_mixed": "mixed",
	} {
		assert.True(t, IsSpeedBenchType(kind), kind)
		assert.Equal(t, want, speedBenchCategory(kind), kind)
	}
	for _, kind := range []string{"speed_bench_", "speed_bench_throughput_4k", "speed_bench_mixed", "multi_turn", ""} {
		assert.False(t, IsSpeedBenchType(kind), kind)
	}
	_, err := Open(context.Background(), o200k(t), Options{InputFile: speedBenchFile, CustomType: "speed_bench_bogus"})
	assert.ErrorContains(t, err, `unknown custom dataset type "speed_bench_bogus"`)
}

// A filter that matches no row is refused (a run without data is not a
// benchmark), naming the categories the file has.
func TestSpeedBenchNoMatch(t *testing.T) {
	_, err := Open(context.Background(), o200k(t), Options{InputFile: speedBenchFile, CustomType: "speed_bench_writing"})
	require.Error(t, err)
	les := lineErrors(err)
	require.Len(t, les, 1, "%v", err)
	assert.Equal(t, speedBenchFile, les[0].Path)
	assert.Equal(t, "category", les[0].Field)
	assert.Contains(t, err.Error(), `speed_bench_writing dataset: `)
	assert.Contains(t, err.Error(), `SPEED-Bench category filter "writing" matched no rows: the file's 4 rows are of categories `+
		`"coding" (2), "math" (1), "mixed" (1). Verify the configured category exists in this dataset`)
}

// Every malformed row is reported at its line and field, whatever its
// category: AIPerf validates a row before it filters it.
func TestSpeedBenchProblems(t *testing.T) {
	dir := t.TempDir()
	ok := `"question_id": "0123456789abcdef0123456789abcdef", "category": "coding"`
	lines := []string{
		`{` + ok + `, "messages": [{"role": "user", "content": "fine"}]}`,
		`{` + ok + `, "messages": [{"role": "user", "content": "` + SpeedBenchPlaceholder + `"}]}`,
		`{"question_id": "abc", "category": "math", "messages": [{"role": "user", "content": "x"}]}`,
		`{"question_id": "0123456789abcdef0123456789abcdef", "category": "", "messages": [{"role": "user", "content": "x"}]}`,
		`{` + ok + `, "messages": []}`,
		`{` + ok + `, "messages": [{"role": "user", "content": "  \n"}]}`,
		`{` + ok + `, "messages": [{"role": "user", "content": 7}]}`,
		`{` + ok + `, "messages": ["hello"]}`,
		`{` + ok + `, "messages": [{"content": "no role"}]}`,
		`{"category": "coding", "messages": [{"role": "user", "content": "x"}]}`,
		`{` + ok + `, "messages": [{"role": "user", "content": "x"}]`,
		`{` + ok + `, "messages": [{"role": "user", "content": "\u001f\u001c "}]}`,
	}
	path := filepath.Join(dir, "speed.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	wantProblems(t, Options{InputFile: path, CustomType: "speed_bench_coding"}, map[int]string{
		2:  `messages[0].content: is SPEED-Bench's placeholder "FULL BENCHMARK DATA SHOULD BE FETCHED FROM THE SOURCE USING SPECDEC_BENCH", not a prompt`,
		3:  "question_id: expected a string of exactly 32 characters (SPEED-Bench's question id), got 3 characters",
		4:  "category: expected a non-empty string",
		5:  `messages: expected a non-empty list of {"role", "content"} messages`,
		6:  `messages[0].content: expected a non-blank string, got "  \n"`,
		7:  "messages[0].content: expected a string, got a number",
		8:  `messages[0]: expected a {"role", "content"} object, got a string`,
		9:  "messages[0].role: missing: expected a non-blank string",
		10: "question_id: missing",
		11: "invalid JSON",
		12: `messages[0].content: expected a non-blank string`, // Python's strip() takes the separators too
	})
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: "speed_bench_coding"})
	assert.Contains(t, err.Error(), "SPECDEC_BENCH", "the placeholder's error says where the prompts come from")
}

// Rows sharing a question_id are one conversation, their messages in file
// order, as AIPerf groups a multi-turn loader's sessions.
func TestSpeedBenchSharedQuestionID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "speed.jsonl")
	row := func(cat, text string) string {
		return `{"question_id": "0123456789abcdef0123456789abcdef", "category": "` + cat + `", "messages": [{"role": "user", "content": "` + text + `"}]}`
	}
	other := `{"question_id": "ffffffffffffffffffffffffffffffff", "category": "qa", "messages": [{"role": "user", "content": "between"}]}`
	require.NoError(t, os.WriteFile(path, []byte(row("qa", "first")+"\n"+other+"\n"+row("qa", "second")+"\n"), 0o644))
	d, convs := open(t, Options{InputFile: path, CustomType: "speed_bench_qa"})
	require.Len(t, convs, 2)
	assert.Equal(t, []string{"first", "second"}, texts(convs[0]))
	assert.Equal(t, []string{"between"}, texts(convs[1]))
	assert.Equal(t, 3, Turns(d))
}

// A conversation read back from a file that changed since it was opened
// is refused, as for every indexed file.
func TestSpeedBenchChangedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "speed.jsonl")
	data, err := os.ReadFile(speedBenchFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	d, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: "speed_bench_qualitative"})
	require.NoError(t, err)
	defer d.Close()
	changed := strings.Replace(string(data), "Fibonacci", "Fibonaccx", 1)
	require.NoError(t, os.WriteFile(path, []byte(changed), 0o644))
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(path, later, later))
	_, err = d.Conversation(0)
	assert.True(t, errors.Is(err, ErrInputChanged), "%v", err)
}

// A Parquet file (what Hugging Face serves of nvidia/SPEED-Bench, its
// prompts withheld) is refused with what to do instead.
func TestSpeedBenchParquetRefused(t *testing.T) {
	_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files/baseten.parquet", CustomType: "speed_bench_qualitative"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a Parquet file")
	assert.Contains(t, err.Error(), "SPECDEC_BENCH")
}

// The no-match error stays short whatever the file's categories: it names
// the most frequent ones that fit and counts the rest.
func TestSpeedBenchNoMatchManyCategories(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString(`{"question_id": "0123456789abcdef0123456789abcdef", "category": "` + strings.Repeat("c", 30+i%50) +
			string(rune('a'+i%26)) + `", "messages": [{"role": "user", "content": "x"}]}` + "\n")
	}
	path := filepath.Join(t.TempDir(), "speed.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: "speed_bench_rag"})
	les := lineErrors(err)
	require.Len(t, les, 1, "%v", err)
	assert.Less(t, len(les[0].Msg), 400)
	assert.Contains(t, les[0].Msg, "the file's 200 rows are of categories ")
	assert.Regexp(t, `, \d+ rows of other categories\. Verify`, les[0].Msg)
}

// FuzzSpeedBench feeds arbitrary file bytes to the SPEED-Bench reader,
// with and without a category filter: nothing may panic, every problem is
// placed in the file in a short message, and every conversation of a file
// that opens reads back with at least one turn.
func FuzzSpeedBench(f *testing.F) {
	data, err := os.ReadFile(speedBenchFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	for line := range strings.SplitSeq(string(data), "\n") {
		f.Add([]byte(line))
	}
	f.Add([]byte(`{"question_id": "0123456789abcdef0123456789abcdef", "category": "coding", "messages": [{"role": "user", "content": "` +
		SpeedBenchPlaceholder + `"}]}`))
	tok := o200k(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "in.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{"speed_bench_coding", "speed_bench_qualitative"} {
			d, err := Open(context.Background(), tok, Options{InputFile: path, CustomType: kind, OSLMean: 4})
			if err != nil {
				checkFuzzError(t, err, path, bytes.Count(data, []byte{'\n'})+1)
				continue
			}
			for i := range d.Len() {
				if c, err := d.Conversation(i); err != nil || len(c.Turns) == 0 || c.ID == "" {
					t.Fatalf("%s: conversation %d: %v (%d turns)", kind, i, err, len(c.Turns))
				}
			}
			d.Close()
		}
	})
}

// A row of many bad messages is reported in at most maxProblems problems.
func TestSpeedBenchProblemsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "speed.jsonl")
	line := `{"question_id": "0123456789abcdef0123456789abcdef", "category": "qa", "messages": [{}` + strings.Repeat(`, {}`, 100_000) + "]}\n"
	require.NoError(t, os.WriteFile(path, []byte(line), 0o644))
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: "speed_bench_qa"})
	les := lineErrors(err)
	require.NotEmpty(t, les)
	assert.LessOrEqual(t, len(les), maxProblems)
	assert.Equal(t, "messages[0].role", les[0].Field)
}
