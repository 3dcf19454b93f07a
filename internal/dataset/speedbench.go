package dataset

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// SPEED-Bench (NVIDIA's SPEculative Evaluation Dataset, nvidia/SPEED-Bench)
// read from a local JSONL file, as AIPerf's SpeedBenchLoader reads it: a
// row is {"question_id", "category", "messages": [{"role", "content"}]},
// one multi-turn conversation whose turns are its messages in order, each
// under its own role (no system message is hoisted: AIPerf keeps a
// benchmark's authored structure). A per-category type keeps the rows of
// its category only. Nothing is downloaded.

// speedBenchPrefix starts every SPEED-Bench type.
const speedBenchPrefix = "speed_bench_"

// SpeedBenchPlaceholder is the text SPEED-Bench publishes in place of a
// prompt whose source may not be redistributed; the prompts are built
// locally with SPEED-Bench's own scripts (SPECDEC_BENCH). A row holding it
// is refused, as AIPerf refuses it: it would benchmark the placeholder.
const SpeedBenchPlaceholder = "FULL BENCHMARK DATA SHOULD BE FETCHED FROM THE SOURCE USING SPECDEC_BENCH"

// speedBenchIDLen is the length of a SPEED-Bench question_id, in
// characters (AIPerf's SpeedBenchRow).
const speedBenchIDLen = 32

// SpeedBench's qualitative categories (80 prompts each) and the entropy
// tiers of its throughput splits (512 prompts each per input length).
var (
	speedBenchDomains = []string{"coding", "humanities", "math", "multilingual", "qa", "rag", "reasoning", "roleplay",
		"stem", "summarization", "writing"}
	speedBenchSizes = []string{"1k", "2k", "8k", "16k", "32k"}
	speedBenchTiers = []string{"low_entropy", "mixed", "high_entropy"}
)

// SpeedBenchTypes are AIPerf's speed_bench_* --custom-dataset-type values:
// the qualitative split, one per qualitative category, the throughput
// splits by input length, and each of those per entropy tier.
var SpeedBenchTypes = speedBenchTypes()

func speedBenchTypes() []string {
	ts := []string{speedBenchPrefix + "qualitative"}
	for _, c := range speedBenchDomains {
		ts = append(ts, speedBenchPrefix+c)
	}
	for _, n := range speedBenchSizes {
		ts = append(ts, speedBenchPrefix+"throughput_"+n)
		for _, tier := range speedBenchTiers {
			ts = append(ts, speedBenchPrefix+"throughput_"+n+"_"+tier)
		}
	}
	return ts
}

// IsSpeedBenchType reports whether kind is one of SpeedBenchTypes.
func IsSpeedBenchType(kind string) bool {
	return strings.HasPrefix(kind, speedBenchPrefix) && slices.Contains(SpeedBenchTypes, kind)
}

// speedBenchCategory is the category the rows of a SPEED-Bench type must
// have, as AIPerf's plugin metadata sets it: the domain of a per-category
// type, the tier of a per-tier throughput type; "" (every row) for the
// qualitative split and the whole throughput splits.
func speedBenchCategory(kind string) string {
	rest := strings.TrimPrefix(kind, speedBenchPrefix)
	if slices.Contains(speedBenchDomains, rest) {
		return rest
	}
	for _, tier := range speedBenchTiers {
		if strings.HasPrefix(rest, "throughput_") && strings.HasSuffix(rest, "_"+tier) {
			return tier
		}
	}
	return ""
}

// speedBenchRow is a SPEED-Bench line. Other keys (sub_category, source,
// difficulty, …) are ignored, as AIPerf ignores them.
type speedBenchRow struct {
	QuestionID *string           `json:"question_id"`
	Category   *string           `json:"category"`
	Messages   []json.RawMessage `json:"messages"`
	// lead: its first message is a system message, which a conversation
	// it opens hoists into its system message (as multi_turn's).
	lead bool
}

// speedBenchMessage is one message of a row.
type speedBenchMessage struct {
	Role    json.RawMessage `json:"role"`
	Content json.RawMessage `json:"content"`
}

// checkSpeedBench validates a SPEED-Bench line as AIPerf's SpeedBenchRow
// does (at most maxProblems problems), returning it and, with keep, its
// messages as (role, content) pairs.
func checkSpeedBench(line []byte, keep bool) (speedBenchRow, [][2]string, []problem) {
	var r speedBenchRow
	if ps := decodeLine(line, &r); ps != nil {
		return r, nil, ps
	}
	var ps []problem
	if r.QuestionID == nil {
		ps = append(ps, problemf("question_id", "missing: expected SPEED-Bench's %d-character question id", speedBenchIDLen))
	} else if n := utf8.RuneCountInString(*r.QuestionID); n != speedBenchIDLen {
		ps = append(ps, problemf("question_id", "expected a string of exactly %d characters (SPEED-Bench's question id), got %d characters",
			speedBenchIDLen, n))
	}
	switch {
	case r.Category == nil:
		ps = append(ps, problemf("category", "missing: expected the row's category (a domain such as %q, or an entropy tier such as %q)", "coding", "mixed"))
	case *r.Category == "":
		ps = append(ps, problemf("category", "expected a non-empty string"))
	}
	if len(r.Messages) == 0 {
		ps = append(ps, problemf("messages", `expected a non-empty list of {"role", "content"} messages`))
	}
	var msgs [][2]string
	for i, raw := range r.Messages {
		if len(ps) >= maxProblems {
			break
		}
		role, content, mps := checkSpeedBenchMessage(fmt.Sprintf("messages[%d]", i), raw)
		ps = append(ps, mps...)
		r.lead = r.lead || i == 0 && role == "system"
		if keep && len(ps) == 0 {
			msgs = append(msgs, [2]string{role, content})
		}
	}
	if len(ps) > 0 {
		return r, nil, ps
	}
	return r, msgs, nil
}

// checkSpeedBenchMessage checks one message: an object whose role and
// content are non-blank strings, the content not SPEED-Bench's placeholder.
func checkSpeedBenchMessage(field string, raw json.RawMessage) (role, content string, ps []problem) {
	var m speedBenchMessage
	if kind := jsonKindOf(raw); kind != "an object" || json.Unmarshal(raw, &m) != nil {
		return "", "", []problem{problemf(field, `expected a {"role", "content"} object, got %s`, kind)}
	}
	role, rp := nonBlankString(field+".role", m.Role)
	content, cp := nonBlankString(field+".content", m.Content)
	ps = append(rp, cp...)
	if cp == nil && strings.HasPrefix(content, SpeedBenchPlaceholder) {
		ps = append(ps, problemf(field+".content", "is SPEED-Bench's placeholder %q, not a prompt: the published dataset "+
			"withholds the prompts its sources do not let it redistribute; build the full data with SPEED-Bench's own "+
			"scripts (SPECDEC_BENCH: fetch the prompts from their sources) and give that file", SpeedBenchPlaceholder))
	}
	return role, content, ps
}

// nonBlankString decodes a raw field that must be a string with something
// other than white space in it.
func nonBlankString(field string, raw json.RawMessage) (string, []problem) {
	var s string
	switch {
	case !isSet(raw):
		return "", []problem{problemf(field, "missing: expected a non-blank string")}
	case json.Unmarshal(raw, &s) != nil:
		return "", []problem{problemf(field, "expected a string, got %s", jsonKindOf(raw))}
	case strings.TrimFunc(s, pythonSpace) == "": // AIPerf's str.strip()
		return "", []problem{problemf(field, "expected a non-blank string, got %s", brief(s))}
	}
	return s, nil
}

// pythonSpace is Python's str.isspace: Unicode's white space and the
// information separators U+001C to U+001F.
func pythonSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// openSpeedBench indexes a SPEED-Bench JSONL file: every row is checked,
// the rows of the type's category (every row, for a type without one)
// kept, each a conversation keyed by its question_id.
func openSpeedBench(ctx context.Context, tok tokenizer.Tokenizer, o Options, kind string) (Dataset, error) {
	if isParquet(o.InputFile) {
		return nil, fmt.Errorf("%s dataset: %s is a Parquet file: the Parquet files of nvidia/SPEED-Bench hold placeholders "+
			"for the prompts its sources do not let it redistribute; build the JSONL of full prompts with SPEED-Bench's "+
			"own scripts (SPECDEC_BENCH) and give that file", kind, o.InputFile)
	}
	d := &fileDataset{kind: kind, path: o.InputFile, o: o, tok: tok}
	f, err := inputfile.Open(o.InputFile)
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", kind, err)
	}
	d.f, d.list, d.stamp = f, []*os.File{f}, stampOf(f)
	tally := newCategoryTally(speedBenchCategory(kind))
	if err := indexFile(ctx, d, tally.check); err != nil {
		f.Close()
		if ctx.Err() == nil && tally.noneMatched() {
			err = tally.noMatch(o.InputFile)
		}
		return nil, fmt.Errorf("%s dataset: %w", kind, err)
	}
	return &speedBenchSet{d}, nil
}

// speedBenchSet is an indexed SPEED-Bench file: a fileDataset whose rows
// are read back as SPEED-Bench conversations.
type speedBenchSet struct{ *fileDataset }

// Conversation reads conversation i's rows back (one, or several rows
// sharing a question_id, concatenated as AIPerf groups them) and makes
// each message a turn. It is safe for concurrent use.
func (s *speedBenchSet) Conversation(i int) (Conversation, error) {
	d := s.fileDataset
	lo, hi, err := d.rowRange(i)
	if err != nil {
		return Conversation{}, err
	}
	b := convBuilder{Conversation: Conversation{Mode: DeltasWithoutResponses}}
	for r := lo; r < hi; r++ {
		line := make([]byte, d.n[r])
		_, err := d.f.ReadAt(line, d.off[r])
		if err := d.checkRow(r, line, err); err != nil {
			return Conversation{}, err
		}
		row, msgs, ps := checkSpeedBench(line, true)
		if ps != nil {
			return Conversation{}, d.changed("its row at byte %d is no longer a SPEED-Bench row", d.off[r])
		}
		if b.ID == "" {
			b.ID, b.lead = *row.QuestionID, row.lead
		}
		for k, m := range msgs {
			b.Turns = append(b.Turns, Turn{Text: m[1], Role: m[0], InputTokens: d.tok.Count(m[1]),
				MaxTokens: outputTokens(d.o, nil, uint64(d.off[r])+uint64(k))})
		}
	}
	b.hoistSystem()
	return b.Conversation, nil
}

// maxTallied bounds the categories a categoryTally names.
const maxTallied = 64

// categoryTally filters a SPEED-Bench file's rows by category as they are
// checked (on every CPU), counting the categories of the rows it leaves
// out, for the error of a filter that matches no row.
type categoryTally struct {
	want         string
	matched, bad atomic.Int64
	mu           sync.Mutex
	left         map[string]int // rows left out, by category (at most maxTallied)
	more         int            // rows left out of other categories
}

func newCategoryTally(want string) *categoryTally {
	return &categoryTally{want: want, left: map[string]int{}}
}

// check is the index's line check: a row with a problem is reported, a
// row of another category skipped.
func (t *categoryTally) check(line []byte) (rowInfo, []problem) {
	r, _, ps := checkSpeedBench(line, false)
	if ps != nil {
		t.bad.Add(1)
		return rowInfo{}, ps
	}
	if t.want != "" && *r.Category != t.want {
		t.mu.Lock()
		if _, ok := t.left[*r.Category]; ok || len(t.left) < maxTallied {
			t.left[*r.Category]++
		} else {
			t.more++
		}
		t.mu.Unlock()
		return rowInfo{skip: true}, nil
	}
	t.matched.Add(1)
	nan := math.NaN()
	return rowInfo{session: r.QuestionID, turns: len(r.Messages), lead: r.lead, ts: nan, ts0: nan, first: nan, last: nan}, nil
}

// noneMatched reports whether every row was valid and of another category.
func (t *categoryTally) noneMatched() bool {
	return t.matched.Load() == 0 && t.bad.Load() == 0 && (len(t.left) > 0 || t.more > 0)
}

// noMatch is the error of a category filter that matched no row of path:
// AIPerf's warning, and the categories the file has.
func (t *categoryTally) noMatch(path string) error {
	type seen struct {
		name string
		n    int
	}
	var list []seen
	rows := t.more
	for name, n := range t.left {
		list = append(list, seen{name, n})
		rows += n
	}
	slices.SortFunc(list, func(a, b seen) int { return cmp.Or(b.n-a.n, strings.Compare(a.name, b.name)) })
	var names []string
	shown, size := 0, 0
	for _, s := range list {
		name := fmt.Sprintf("%s (%d)", brief(s.name), s.n)
		if size += len(name) + 2; size > 150 { // a short message, whatever the file
			break
		}
		names = append(names, name)
		shown += s.n
	}
	if shown < rows {
		names = append(names, fmt.Sprintf("%d rows of other categories", rows-shown))
	}
	return &LineError{Path: path, Field: "category", Msg: fmt.Sprintf("SPEED-Bench category filter %q matched no rows: "+
		"the file's %d rows are of categories %s. Verify the configured category exists in this dataset: a qualitative "+
		"split has the 11 domains, a throughput split low_entropy, mixed and high_entropy", t.want, rows, strings.Join(names, ", "))}
}
