package dataset

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateBaseten = flag.Bool("update-baseten", false, "rewrite testdata/files/baseten*.parquet")

// basetenFixtureRow is a row of the Baseten fixtures: AIPerf's columns,
// the optional ones nullable, and one column the loader ignores.
type basetenFixtureRow struct {
	Timestamp  int64   `parquet:"timestamp_start_unix_ms"`
	Prompt     *string `parquet:"prompt,optional"`
	Input      int64   `parquet:"input_tokens"`
	Output     int64   `parquet:"output_tokens"`
	Hashes     []int64 `parquet:"total_hashes,list"`
	Session    *string `parquet:"provided_session_id,optional"`
	PoorMan    *int64  `parquet:"poor_man_session_id,optional"`
	BlockSize  *int64  `parquet:"block_size,optional"`
	Canceled   bool    `parquet:"request_canceled"`
	OutputText string  `parquet:"output_text"`
}

// basetenFixture is a 6-row trace, its rows out of time order: session
// "s1" (3 rows, listed 2nd, 1st, 3rd by time), session "s2" (2 rows, one
// canceled with output_tokens 0), and a row without a session. Its
// timestamps are Unix ms; the earliest is 1,700,000,000,000.
var basetenFixture = []basetenFixtureRow{
	{Timestamp: 1_700_000_001_000, Prompt: ptr("s1 turn two"), Input: 30, Output: 7, Hashes: []int64{1, 2, 3}, Session: ptr("s1"), PoorMan: ptr[int64](9), BlockSize: ptr[int64](16)},
	{Timestamp: 1_700_000_000_000, Prompt: ptr("s1 turn one"), Input: 20, Output: 5, Hashes: []int64{1, 2}, Session: ptr("s1"), PoorMan: ptr[int64](9), BlockSize: ptr[int64](16)},
	{Timestamp: 1_700_000_000_500, Prompt: ptr("s2 first"), Input: 10, Output: 0, Session: ptr("s2"), PoorMan: ptr[int64](9), Canceled: true},
	{Timestamp: 1_700_000_002_000, Prompt: ptr("s1 turn three"), Input: 40, Output: 9, Hashes: []int64{1, 2, 3, 4}, Session: ptr("s1"), PoorMan: ptr[int64](9), BlockSize: ptr[int64](16)},
	{Timestamp: 1_700_000_002_500, Prompt: ptr("no session"), Input: 5, Output: 3},
	{Timestamp: 1_700_000_003_000, Prompt: ptr("s2 second"), Input: 12, Output: 4, Session: ptr("s2"), PoorMan: ptr[int64](9)},
}

// basetenBad has a problem on rows 2, 3 and 5.
var basetenBad = []basetenFixtureRow{
	{Timestamp: 1000, Prompt: ptr("fine"), Input: 1, Output: 1},
	{Timestamp: 1001, Input: 1, Output: 1},
	{Timestamp: 1002, Prompt: ptr("negative"), Input: -4, Output: 1, Hashes: []int64{1, -2}},
	{Timestamp: 1003, Prompt: ptr("fine"), Input: 1, Output: 1},
	{Timestamp: -5, Prompt: ptr("early"), Input: 1, Output: 1, BlockSize: ptr[int64](0)},
}

func writeBaseten(t *testing.T, path string, rows []basetenFixtureRow, rowGroup int) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w := parquet.NewGenericWriter[basetenFixtureRow](f)
	for len(rows) > 0 { // several row groups, so that reading back seeks across them
		n := min(rowGroup, len(rows))
		_, err = w.Write(rows[:n])
		require.NoError(t, err)
		require.NoError(t, w.Flush())
		rows = rows[n:]
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

// TestWriteBasetenFixtures rewrites the committed fixtures with
// -update-baseten (cmd/aiperf's tests read them too).
func TestWriteBasetenFixtures(t *testing.T) {
	if !*updateBaseten {
		t.Skip("run with -update-baseten to rewrite the fixtures")
	}
	writeBaseten(t, "testdata/files/baseten.parquet", basetenFixture, 4)
	writeBaseten(t, "testdata/files/bad/baseten.parquet", basetenBad, 2)
}

func TestBasetenFile(t *testing.T) {
	d, convs := open(t, Options{InputFile: "testdata/files/baseten.parquet", CustomType: TypeBasetenTrace, Seed: 3, OSLMean: 77,
		FixedSchedule: true})
	assert.True(t, IsTrace(d))
	assert.Equal(t, SamplingSequential, d.Sampling())
	assert.Equal(t, 6, Turns(d))
	require.Len(t, convs, 3, "sessions s1 and s2, and the row without a session")

	s1 := convs[0]
	assert.Equal(t, "s1", s1.ID, "grouped by provided_session_id")
	assert.Equal(t, MessageArrayWithResponses, s1.Mode, "each prompt is the whole request: sent on its own")
	assert.Equal(t, []string{"s1 turn one", "s1 turn two", "s1 turn three"}, texts(s1), "sorted by timestamp, sent verbatim")
	assert.Equal(t, []float64{0, 1000, 2000}, []float64{s1.Turns[0].TimestampMs, s1.Turns[1].TimestampMs, s1.Turns[2].TimestampMs},
		"ms since the file's first event")
	assert.Equal(t, 5, s1.Turns[0].MaxTokens, "output_tokens, not --osl")
	assert.Equal(t, map[string]any{"min_tokens": 5, "hash_ids": []int64{1, 2}, "block_size": int64(16)}, s1.Turns[0].Extra,
		"min_tokens is the recorded output, total_hashes forwarded as hash_ids, block_size as given")

	s2 := convs[1]
	assert.Equal(t, "s2", s2.ID)
	assert.Equal(t, 1, s2.Turns[0].MaxTokens, "a canceled request's output_tokens 0 is floored to 1")
	assert.Equal(t, map[string]any{"min_tokens": 1}, s2.Turns[0].Extra, "no hashes, no block size: neither sent")
	assert.Equal(t, []float64{500, 3000}, []float64{s2.Turns[0].TimestampMs, s2.Turns[1].TimestampMs})

	lone := convs[2]
	assert.Equal(t, "baseten.parquet:5", lone.ID, "a null session id: a session of its own")
	assert.Equal(t, DeltasWithoutResponses, lone.Mode)
	assert.Equal(t, []Timed{{0, 0}, {1, 500}, {2, 2500}}, d.Schedule())

	det, err := Detect("testdata/files/baseten.parquet", "")
	require.NoError(t, err)
	assert.Equal(t, Detected{Type: TypeBasetenTrace, Timestamped: true}, det, "a .parquet file with the required columns")
}

// --omit-kv-hints leaves the recorded hash_ids and block_size out of the
// bodies, --no-force-min-tokens the min_tokens; max_tokens stays the
// recorded output. Both are refused for a file of another format, named or
// detected.
func TestBasetenBodyControls(t *testing.T) {
	_, convs := open(t, Options{InputFile: "testdata/files/baseten.parquet", Replay: Replay{OmitKVHints: true}})
	assert.Equal(t, map[string]any{"min_tokens": 5}, convs[0].Turns[0].Extra)
	_, convs = open(t, Options{InputFile: "testdata/files/baseten.parquet", Replay: Replay{NoMinTokens: true}})
	assert.Equal(t, map[string]any{"hash_ids": []int64{1, 2}, "block_size": int64(16)}, convs[0].Turns[0].Extra)
	assert.Equal(t, 5, convs[0].Turns[0].MaxTokens)

	for _, r := range []Replay{{OmitKVHints: true}, {NoMinTokens: true}} {
		_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files/bailian.jsonl", Replay: r})
		assert.ErrorContains(t, err, "applies to baseten_trace")
		assert.ErrorContains(t, err, "bailian_trace sends")
	}
}

func TestBasetenSessionColumn(t *testing.T) {
	t.Setenv(BasetenSessionEnv, "poor_man_session_id")
	_, convs := open(t, Options{InputFile: "testdata/files/baseten.parquet", CustomType: TypeBasetenTrace})
	require.Len(t, convs, 2, "poor_man_session_id 9 holds every row that has one")
	assert.Equal(t, "9", convs[0].ID)
	assert.Equal(t, []string{"s1 turn one", "s2 first", "s1 turn two", "s1 turn three", "s2 second"}, texts(convs[0]))

	t.Setenv(BasetenSessionEnv, "chat_id")
	_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files/baseten.parquet", CustomType: TypeBasetenTrace})
	assert.ErrorContains(t, err, `AIPERF_DATASET_BASETEN_SESSION_COLUMN="chat_id": expected provided_session_id or poor_man_session_id`)
}

func TestBasetenOffsets(t *testing.T) {
	lo, hi := 400.0, 2000.0
	_, convs := open(t, Options{InputFile: "testdata/files/baseten.parquet", CustomType: TypeBasetenTrace,
		StartOffsetMs: &lo, EndOffsetMs: &hi})
	require.Len(t, convs, 2)
	assert.Equal(t, []string{"s2 first"}, texts(convs[0]), "offsets count from the file's first event; sessions in order of their start")
	assert.Equal(t, []string{"s1 turn two", "s1 turn three"}, texts(convs[1]))
}

func TestBasetenRefusesBadRows(t *testing.T) {
	_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files/bad/baseten.parquet", CustomType: TypeBasetenTrace})
	require.Error(t, err)
	var le *LineError
	require.True(t, errors.As(err, &le))
	for _, want := range []string{
		"5 problems",
		"bad/baseten.parquet:2: prompt: required: expected the completion prompt (a string), got null",
		"bad/baseten.parquet:3: input_tokens: expected a non-negative integer, got -4",
		"bad/baseten.parquet:3: total_hashes: expected a list of non-negative integers, got an element -2",
		"bad/baseten.parquet:5: timestamp_start_unix_ms: expected a non-negative integer, got -5",
		"bad/baseten.parquet:5: block_size: expected an integer of at least 1, got 0",
	} {
		assert.Contains(t, err.Error(), want)
	}

	dir := t.TempDir()
	type other struct {
		Prompt string `parquet:"prompt"`
	}
	f, err := os.Create(filepath.Join(dir, "other.parquet"))
	require.NoError(t, err)
	require.NoError(t, parquet.Write(f, []other{{"x"}}))
	require.NoError(t, f.Close())
	_, err = Open(context.Background(), o200k(t), Options{InputFile: f.Name(), CustomType: TypeBasetenTrace})
	assert.ErrorContains(t, err, "other.parquet: missing column(s) timestamp_start_unix_ms, input_tokens, output_tokens: "+
		"a baseten_trace needs timestamp_start_unix_ms, prompt, input_tokens, output_tokens")
	_, err = Detect(f.Name(), "")
	assert.ErrorContains(t, err, "a Parquet file without a Baseten trace's columns")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "junk.parquet"), []byte("not parquet"), 0o644))
	_, err = Open(context.Background(), o200k(t), Options{InputFile: filepath.Join(dir, "junk.parquet"), CustomType: TypeBasetenTrace})
	assert.ErrorContains(t, err, "junk.parquet: not a readable Parquet file")
	_, err = Open(context.Background(), o200k(t), Options{InputFile: "testdata/files/baseten.parquet", CustomType: TypeMooncakeTrace})
	assert.ErrorContains(t, err, "only baseten_trace reads Parquet here")
}

// BenchmarkBasetenIndex indexes a Baseten trace of 100,000 rows (10 rows a
// session, a 2 KB prompt each, row groups of 10,000): the heap the index
// keeps per row, and the rows indexed per second.
func BenchmarkBasetenIndex(b *testing.B) {
	const rows, group = 100_000, 10_000
	path := filepath.Join(b.TempDir(), "trace.parquet")
	f, err := os.Create(path)
	require.NoError(b, err)
	w := parquet.NewGenericWriter[basetenFixtureRow](f)
	prompt := strings.Repeat("word ", 400)
	batch := make([]basetenFixtureRow, 0, group)
	for i := range rows {
		batch = append(batch, basetenFixtureRow{Timestamp: 1_700_000_000_000 + int64(i)*10, Prompt: &prompt, Input: 400, Output: 50,
			Hashes: []int64{int64(i / 10), int64(i)}, Session: ptr(strconv.Itoa(i / 10))})
		if len(batch) == group {
			_, err = w.Write(batch)
			require.NoError(b, err)
			require.NoError(b, w.Flush())
			batch = batch[:0]
		}
	}
	require.NoError(b, w.Close())
	require.NoError(b, f.Close())
	tok := o200k(b)
	for b.Loop() {
		before := heapInUse()
		d, err := Open(context.Background(), tok, Options{InputFile: path, CustomType: TypeBasetenTrace, FixedSchedule: true})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(heapInUse()-before)/rows, "heap-B/row")
		d.Close()
	}
	b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// --synthesis-max-isl drops the rows of more input tokens and
// --synthesis-max-osl caps max_tokens and min_tokens, as AIPerf does.
func TestBasetenMaxISLAndOSL(t *testing.T) {
	_, convs := open(t, Options{InputFile: "testdata/files/baseten.parquet", CustomType: TypeBasetenTrace, MaxISL: 25, MaxOSL: 4})
	require.Len(t, convs, 3)
	assert.Equal(t, []string{"s1 turn one"}, texts(convs[0]), "rows of 30 and 40 input tokens dropped")
	assert.Equal(t, 4, convs[0].Turns[0].MaxTokens, "5 capped at 4")
	assert.Equal(t, 4, convs[0].Turns[0].Extra["min_tokens"])
	_, err := Open(context.Background(), o200k(t), Options{InputFile: "testdata/files/baseten.parquet", CustomType: TypeBasetenTrace, MaxISL: 1})
	assert.ErrorContains(t, err, "no records left: all 6 rows have timestamps outside the fixed schedule window [-∞, +∞] ms or more than 1 input tokens (--synthesis-max-isl)")
}

// A corrupt Parquet file (the fixture cut short, or a byte flipped) is an
// error, never a panic: the Parquet reader's panics are recovered.
func TestBasetenCorruptFiles(t *testing.T) {
	good, err := os.ReadFile("testdata/files/baseten.parquet")
	require.NoError(t, err)
	tok, path := o200k(t), filepath.Join(t.TempDir(), "x.parquet")
	for i := 0; i < len(good); i += 11 {
		flipped := bytes.Clone(good)
		flipped[i] ^= 0xff
		for _, b := range [][]byte{good[:i], flipped} {
			require.NoError(t, os.WriteFile(path, b, 0o644))
			require.NotPanics(t, func() {
				d, err := Open(context.Background(), tok, Options{InputFile: path, CustomType: TypeBasetenTrace})
				if err != nil {
					return
				}
				for c := range d.Len() {
					_, _ = d.Conversation(c)
				}
				d.Close()
			}, "byte %d", i)
		}
	}
}

// BenchmarkBasetenReplay reads a Baseten trace's conversations back in the
// order of its schedule (10 rows a session, the file in time order, one
// row group), at two sizes: the time per conversation must not grow with
// the row group (finding a row by reading its row group from the start
// made it grow linearly, and the replay quadratic).
func BenchmarkBasetenReplay(b *testing.B) {
	tok := o200k(b)
	for _, rows := range []int{5_000, 40_000} {
		path := filepath.Join(b.TempDir(), "trace.parquet")
		f, err := os.Create(path)
		require.NoError(b, err)
		w := parquet.NewGenericWriter[basetenFixtureRow](f)
		prompt := strings.Repeat("word ", 40)
		batch := make([]basetenFixtureRow, rows)
		for i := range batch {
			batch[i] = basetenFixtureRow{Timestamp: 1_700_000_000_000 + int64(i)*10, Prompt: &prompt, Input: 40, Output: 5,
				Session: ptr(strconv.Itoa(i / 10))}
		}
		_, err = w.Write(batch)
		require.NoError(b, err)
		require.NoError(b, w.Close())
		require.NoError(b, f.Close())
		d, err := Open(context.Background(), tok, Options{InputFile: path, CustomType: TypeBasetenTrace, FixedSchedule: true})
		require.NoError(b, err)
		sched := d.Schedule()
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			k := 0
			for b.Loop() {
				_, err := d.Conversation(sched[k%len(sched)].Conv)
				require.NoError(b, err)
				k++
			}
		})
		d.Close()
	}
}

// TestBasetenRowsReadBackInAnyOrder: conversations whose rows are spread
// over three row groups, read back at once from 8 goroutines in random
// order, each get their own rows (the open readers move back and forth,
// seek, and are replaced).
func TestBasetenRowsReadBackInAnyOrder(t *testing.T) {
	const sessions = 200
	rows := make([]basetenFixtureRow, 3*sessions)
	for i := range rows { // session s: rows s, s+200, s+400
		rows[i] = basetenFixtureRow{Timestamp: 1_700_000_000_000 + int64(i), Prompt: ptr("p" + strconv.Itoa(i)), Input: 1, Output: 1,
			Session: ptr(strconv.Itoa(i % sessions))}
	}
	path := filepath.Join(t.TempDir(), "spread.parquet")
	writeBaseten(t, path, rows, sessions)
	d, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeBasetenTrace})
	require.NoError(t, err)
	defer d.Close()
	require.Equal(t, sessions, d.Len())
	order := rand.New(rand.NewPCG(3, 4)).Perm(sessions)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for _, i := range order[w*sessions/8 : (w+1)*sessions/8] {
				c, err := d.Conversation(i)
				if !assert.NoError(t, err) {
					return
				}
				s, err := strconv.Atoi(c.ID)
				require.NoError(t, err)
				want := []string{"p" + strconv.Itoa(s), "p" + strconv.Itoa(s+sessions), "p" + strconv.Itoa(s+2*sessions)}
				assert.Equal(t, want, texts(c), "session %d", s)
			}
		})
	}
	wg.Wait()
}

// TestBasetenScanStopsWithinARowGroup: a scan stops within a batch of the
// cancellation, not at the end of its row group (a group may hold
// millions of rows).
func TestBasetenScanStopsWithinARowGroup(t *testing.T) {
	rows := make([]basetenFixtureRow, 2000)
	for i := range rows {
		rows[i] = basetenFixtureRow{Timestamp: int64(i), Prompt: ptr("p"), Input: 1, Output: 1}
	}
	path := filepath.Join(t.TempDir(), "one-group.parquet")
	writeBaseten(t, path, rows, len(rows))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, err := openBasetenFile(f)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	seen := 0
	err = b.scan(ctx, func(n int64, _ parquet.Row) error {
		if seen++; n == 300 {
			cancel()
		}
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "stopped at row ")
	assert.LessOrEqual(t, seen, 301+btBatchRows, "one batch after the cancellation at most")
}
