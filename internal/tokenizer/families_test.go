package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tokenizer families checked against reference ids (testdata/README.md
// says where each fixture comes from; testdata/families.mjs made the ids).
var families = []string{"llama2", "llama2-metaspace", "deepseek_v3", "bert-base-uncased"}

var familyTokenizers sync.Map // name → func() (Tokenizer, error)

// loadFamily loads a family's tokenizer once for all tests.
func loadFamily(tb testing.TB, name string) Tokenizer {
	tb.Helper()
	f, _ := familyTokenizers.LoadOrStore(name, sync.OnceValues(func() (Tokenizer, error) {
		if name == "llama2-metaspace" {
			return loadMetaspaceVariant(tb.TempDir())
		}
		return Load("testdata/" + name + ".tokenizer.json.gz")
	}))
	tok, err := f.(func() (Tokenizer, error))()
	require.NoError(tb, err, name)
	return tok
}

// loadMetaspaceVariant writes and loads Llama 2's tokenizer.json as Mistral
// v0.3 and newer conversions spell the same pipeline: no normalizer and a
// Metaspace pre-tokenizer prepending ▁ to the first section only (the
// reference script's metaspaceVariant).
func loadMetaspaceVariant(dir string) (Tokenizer, error) {
	data, err := readMaybeGzip("testdata/llama2.tokenizer.json.gz")
	if err != nil {
		return nil, err
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	meta := json.RawMessage(`{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}`)
	f["normalizer"], f["pre_tokenizer"], f["decoder"] = json.RawMessage("null"), meta, meta
	if data, err = json.Marshal(f); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return nil, err
	}
	return Load(path)
}

// familyCorpus returns the segments of the reference corpus.
var familyCorpus = sync.OnceValues(func() ([]string, error) {
	data, err := readMaybeGzip("testdata/families.corpus.json.gz")
	if err != nil {
		return nil, err
	}
	var segments []string
	return segments, json.Unmarshal(data, &segments)
})

func corpusSegments(tb testing.TB) []string {
	tb.Helper()
	segments, err := familyCorpus()
	require.NoError(tb, err)
	return segments
}

// referenceIDs reads a family's ids file: per segment, a uvarint count and
// that many uvarint ids.
func referenceIDs(tb testing.TB, name string, segments int) [][]int {
	tb.Helper()
	data, err := readMaybeGzip("testdata/" + name + ".ids.gz")
	require.NoError(tb, err)
	return referenceIDsFrom(tb, data, segments)
}

// referenceIDsFrom decodes an ids file's contents.
func referenceIDsFrom(tb testing.TB, data []byte, segments int) [][]int {
	tb.Helper()
	r := bufio.NewReader(bytes.NewReader(data))
	out := make([][]int, segments)
	for i := range out {
		n, err := binary.ReadUvarint(r)
		require.NoError(tb, err)
		out[i] = make([]int, n)
		for j := range out[i] {
			id, err := binary.ReadUvarint(r)
			require.NoError(tb, err)
			out[i][j] = int(id)
		}
	}
	_, err := r.ReadByte()
	require.ErrorIs(tb, err, io.EOF, "more ids than segments")
	return out
}

// TestFamiliesMatchReference encodes the 1 MiB mixed corpus (prose, code,
// CJK, emoji, digits, whitespace runs, accents, special-token text, long
// runs) with each family's tokenizer: every segment must give exactly the
// reference's ids.
func TestFamiliesMatchReference(t *testing.T) {
	segments := corpusSegments(t)
	size := 0
	for _, s := range segments {
		size += len(s)
	}
	require.GreaterOrEqual(t, size, 1<<20)
	for _, name := range families {
		t.Run(name, func(t *testing.T) {
			tok := loadFamily(t, name)
			want := referenceIDs(t, name, len(segments))
			mismatches, tokens := 0, 0
			for i, s := range segments {
				got := tok.Encode(s)
				tokens += len(got)
				if !slices.Equal(got, want[i]) {
					if mismatches < 5 {
						t.Errorf("segment %d %.120q:\n got %d ids %.300v\nwant %d ids %.300v", i, s, len(got), got, len(want[i]), want[i])
					}
					mismatches++
				}
			}
			assert.Zero(t, mismatches, "%d of %d segments differ", mismatches, len(segments))
			t.Logf("%s: %d segments, %d bytes, %d tokens, %d mismatches", name, len(segments), size, tokens, mismatches)
		})
	}
}

// TestLlamaCppPromptTokens checks the client's ISL of a Llama 2 model
// against llama.cpp's: for each segment of the 1 MiB corpus sent as a
// completions prompt, llama-server's usage.prompt_tokens is BOS and then the
// text's tokens (testdata/llamacpp.mjs made the reference with llama.cpp's
// own tokenizer on a vocabulary-only GGUF of the Llama 2 tokenizer). The
// client counts without BOS (AIPerf's add_special_tokens=False), so every
// prompt must be exactly one token short of llama.cpp's count, and the rest
// of the ids equal.
func TestLlamaCppPromptTokens(t *testing.T) {
	segments := corpusSegments(t)
	tok := loadFamily(t, "llama2")
	want := referenceIDs(t, "llama2.llamacpp", len(segments))
	const bos = 1
	mismatches, prompt := 0, 0
	for i, s := range segments {
		got := tok.Encode(s)
		prompt += len(want[i])
		if len(want[i]) == 0 || want[i][0] != bos || !slices.Equal(got, want[i][1:]) {
			if mismatches < 5 {
				t.Errorf("segment %d %.120q:\n client %d ids %.300v\nllama.cpp %d ids %.300v", i, s, len(got), got, len(want[i]), want[i])
			}
			mismatches++
		}
	}
	assert.Zero(t, mismatches, "%d of %d prompts differ", mismatches, len(segments))
	t.Logf("%d prompts, llama.cpp prompt_tokens %d in all, %d mismatches", len(segments), prompt, mismatches)
}
