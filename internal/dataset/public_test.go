package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeParquet writes rows to a Parquet file in a temporary directory, as
// Hugging Face serves a dataset.
func writeParquet[T any](t *testing.T, name string, rows []T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	require.NoError(t, err)
	w := parquet.NewGenericWriter[T](f)
	_, err = w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	return path
}

// shareGPTRow is a ShareGPT record as Hugging Face's Parquet conversion
// holds it.
type shareGPTRow struct {
	ID            string `parquet:"id"`
	Conversations []struct {
		From  string `parquet:"from"`
		Value string `parquet:"value"`
	} `parquet:"conversations,list"`
}

// shareGPTParquet writes the JSON fixture's entries as a Parquet file.
func shareGPTParquet(t *testing.T) string {
	raw, err := os.ReadFile("testdata/files/sharegpt.json")
	require.NoError(t, err)
	var rows []shareGPTRow
	require.NoError(t, json.Unmarshal(raw, &rows))
	return writeParquet(t, "sharegpt.parquet", rows)
}

func TestShareGPTForms(t *testing.T) {
	_, want := open(t, Options{InputFile: "testdata/files/sharegpt.json", PublicDataset: PublicShareGPT})
	require.Len(t, want, 3)
	for _, path := range []string{"testdata/files/sharegpt.jsonl", shareGPTParquet(t)} {
		d, got := open(t, Options{InputFile: path, PublicDataset: PublicShareGPT})
		assert.Equal(t, want, got, "%s: the same conversations as the JSON array", path)
		assert.Equal(t, 4, Turns(d), path)
	}
}

func TestPromptDatasets(t *testing.T) {
	d, convs := open(t, Options{InputFile: "testdata/files/aimo.jsonl", PublicDataset: PublicAIMO, OSLMean: 64})
	require.Len(t, convs, 2, "records with a null or blank problem are skipped, as AIPerf does")
	assert.Equal(t, SamplingSequential, d.Sampling())
	first := "What is the smallest positive integer n such that 2^n > 1000?"
	assert.Equal(t, []string{first}, texts(convs[0]))
	assert.Equal(t, o200k(t).Count(first), convs[0].Turns[0].InputTokens)
	assert.Equal(t, 64, convs[0].Turns[0].MaxTokens, "max tokens is --osl")
	assert.Equal(t, []string{"Find the sum of the first 20 odd numbers."}, texts(convs[1]))

	type coderRow struct {
		Instruction string `parquet:"instruction"`
		Input       string `parquet:"input"`
		Output      string `parquet:"output"`
	}
	var rows []coderRow
	raw, err := os.ReadFile("testdata/files/instruct_coder.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &rows))
	wantPrompt := "def add(a, b):\n    return a + b\n\nAdd type hints to the function. Just output the code, do not include any explanation."
	for _, path := range []string{"testdata/files/instruct_coder.json", writeParquet(t, "coder.parquet", rows)} {
		_, convs = open(t, Options{InputFile: path, PublicDataset: PublicInstructCoder})
		require.Len(t, convs, 2, path)
		assert.Equal(t, []string{wantPrompt}, texts(convs[0]), path)
		assert.Zero(t, convs[0].Turns[0].MaxTokens, "without --osl no max tokens")
	}
}

func TestPublicProblems(t *testing.T) {
	path := "testdata/files/bad/aimo.jsonl"
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, PublicDataset: PublicAIMOAIME})
	require.Error(t, err)
	les := lineErrors(err)
	require.Len(t, les, 4, "%v", err)
	assert.Equal(t, path+":2: problem: expected a string, got a number", les[0].Error())
	assert.Equal(t, path+":3: problem: missing: expected the record's problem (a string)", les[1].Error())
	assert.Equal(t, path+":4:1: expected a JSON object, got a list", les[2].Error())
	assert.Equal(t, 5, les[3].Line)
	assert.Contains(t, les[3].Msg, "invalid JSON")

	type badRow struct {
		Problem int64 `parquet:"problem"`
	}
	pq := writeParquet(t, "bad.parquet", []badRow{{1}, {2}})
	_, err = Open(context.Background(), o200k(t), Options{InputFile: pq, PublicDataset: PublicAIMO})
	les = lineErrors(err)
	require.Len(t, les, 2, "%v", err)
	assert.Equal(t, pq+":2: problem: expected a string, got a number", les[1].Error(), "a Parquet record is placed by its row")

	huge := filepath.Join(t.TempDir(), "huge.parquet")
	require.NoError(t, os.WriteFile(huge, []byte("PAR1 a few bytes \xff\xff\xff\xffPAR1"), 0o644))
	_, err = Open(context.Background(), o200k(t), Options{InputFile: huge, PublicDataset: PublicAIMO})
	require.ErrorContains(t, err, "huge.parquet: not a readable Parquet file: its footer is said to be 4294967295 bytes, more than the file holds",
		"refused before the reader allocates 4 GiB")

	notPq := filepath.Join(t.TempDir(), "cut.parquet")
	require.NoError(t, os.WriteFile(notPq, []byte("PAR1 and then nothing"), 0o644))
	_, err = Open(context.Background(), o200k(t), Options{InputFile: notPq, PublicDataset: PublicAIMO})
	require.ErrorContains(t, err, "cut.parquet: not a readable Parquet file")

	blank := filepath.Join(t.TempDir(), "blank.jsonl")
	require.NoError(t, os.WriteFile(blank, []byte(`{"problem": ""}`+"\n"), 0o644))
	_, err = Open(context.Background(), o200k(t), Options{InputFile: blank, PublicDataset: PublicAIMO})
	require.ErrorContains(t, err, "blank.jsonl: all 1 records have a blank problem: nothing to send")

	_, err = Open(context.Background(), o200k(t), Options{InputFile: blank, PublicDataset: "mmlu"})
	require.ErrorContains(t, err, `unknown public dataset "mmlu": expected one of [sharegpt aimo`)
}

// FuzzPublicParquet feeds damaged Parquet files to a public dataset: none
// may panic or hang; a refused file's problems name it (a row of it at
// most), and a file that opens reads back.
func FuzzPublicParquet(f *testing.F) {
	type row struct {
		Problem string `parquet:"problem"`
		N       int64  `parquet:"n,optional"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	_, err := w.Write([]row{{"What is 2 + 2?", 1}, {"", 2}, {"Name a prime above 10.", 3}})
	require.NoError(f, err)
	require.NoError(f, w.Close())
	f.Add(buf.Bytes())
	f.Add([]byte("PAR1PAR1"))
	tok := o200k(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "in.parquet")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		d, err := Open(context.Background(), tok, Options{InputFile: path, PublicDataset: PublicAIMO})
		if err != nil {
			les := lineErrors(err)
			require.NotEmpty(t, les, "%v", err)
			for _, le := range les {
				require.Equal(t, path, le.Path)
				require.LessOrEqual(t, len(le.Msg), 400, le.Msg)
			}
			return
		}
		defer d.Close()
		for i := range min(d.Len(), 20) {
			_, err := d.Conversation(i)
			require.NoError(t, err)
		}
	})
}

// TestPublicRecordTooLong: a record over the limit is refused with its
// place, in a JSON array before the decoder holds it whole (a file of one
// endless record would fill the memory), and in JSON Lines.
func TestPublicRecordTooLong(t *testing.T) {
	long := `{"problem": "` + strings.Repeat("x", 8<<20) + `"}`
	for name, body := range map[string]string{
		"long.json":  "[\n  {\"problem\": \"a\"},\n  {\"problem\": \"b\"},\n  " + long + "\n]\n",
		"long.jsonl": "{\"problem\": \"a\"}\n{\"problem\": \"b\"}\n" + long + "\n",
	} {
		path := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		r, err := openRecordFile(path)
		require.NoError(t, err)
		r.max = 1000
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = r.index(context.Background(), "problems", func([]byte) (bool, *problem) { return true, nil })
		runtime.ReadMemStats(&after)
		r.f.Close()
		les := lineErrors(err)
		require.Len(t, les, 1, "%s: %v", name, err)
		assert.Equal(t, map[string]int{"long.json": 4, "long.jsonl": 3}[name], les[0].Line, name)
		assert.Contains(t, les[0].Msg, "longer than 1000 bytes", name)
		if name == "long.json" {
			assert.Contains(t, les[0].Msg, "record 3 ")
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "the 8 MiB record was not held whole")
		}
	}
}

// TestPublicParquetReadBackFromItsSpill: a Parquet file's kept rows are read
// back in any order from the unlinked file written while indexing (none
// left in the temporary directory), so the Parquet file is no longer
// needed; Close releases it.
func TestPublicParquetReadBackFromItsSpill(t *testing.T) {
	type row struct {
		Problem string `parquet:"problem"`
	}
	rows := make([]row, 3000)
	for i := range rows {
		if i%3 != 2 { // every third blank: dropped
			rows[i].Problem = fmt.Sprintf("problem %d", i)
		}
	}
	pq := writeParquet(t, "many.parquet", rows)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	fds := openFDs(t)
	d, err := Open(context.Background(), o200k(t), Options{InputFile: pq, PublicDataset: PublicAIMO})
	require.NoError(t, err)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the spill is unlinked")
	require.NoError(t, os.Remove(pq))
	require.Equal(t, 2000, d.Len())
	rf := d.(*promptDataset).rf
	st, err := rf.f.Stat()
	require.NoError(t, err)
	var kept int64
	for _, n := range rf.n {
		kept += int64(n)
	}
	assert.Equal(t, kept, st.Size(), "the spill holds the kept records only")
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(d.Len()) {
		c, err := d.Conversation(i)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("problem %d", i/2*3+i%2), c.Turns[0].Text)
	}
	require.NoError(t, d.Close())
	assert.Equal(t, fds, openFDs(t), "no descriptor left open")
}

// openFDs counts this process's open descriptors (Linux; -1 elsewhere).
func openFDs(t *testing.T) int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(es)
}
