package tokenizer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secret stands for file content that an error must not repeat.
const secret = "SECRET-CONTENT-0123456789"

// TestLoadRejectsNonTokenizerFiles loads files that are no tokenizer.json
// (--tokenizer /etc/passwd, a binary, a JSON array, hostile strings): each
// error is short, names the path and what is wrong, and never repeats the
// file's content.
func TestLoadRejectsNonTokenizerFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		return path
	}
	tiny, err := os.ReadFile("testdata/gpt2-tiny.tokenizer.json")
	require.NoError(t, err)
	withSplit := func(pattern string) []byte {
		var f map[string]any
		require.NoError(t, json.Unmarshal(tiny, &f))
		f["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": pattern}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "use_regex": false},
		}}
		data, err := json.Marshal(f)
		require.NoError(t, err)
		return data
	}
	binary := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range binary {
		binary[i] = byte(rng.IntN(256))
	}
	copy(binary[100:], secret)
	long := strings.Repeat("x", 200) + secret

	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxFileSize+1)) // sparse: nothing is written
	require.NoError(t, f.Close())

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))

	cases := []struct {
		name, path, want string
	}{
		{"passwd", write("passwd", []byte("root:x:0:0:"+secret+":/root:/bin/bash\n")), "not a tokenizer.json: invalid JSON at byte 1"},
		{"binary", write("model.bin", binary), "invalid JSON"},
		{"truncated", write("cut.json", tiny[:len(tiny)/2]), "invalid JSON"},
		{"JSON array", write("array.json", []byte(`["`+secret+`"]`)), "the top-level value is a JSON array, want an object"},
		{"no model", write("other.json", []byte(`{"data": ["`+secret+`"]}`)), `no "model" object`},
		{"vocab of the wrong type", write("vocab.json", []byte(`{"model": {"type": "BPE", "vocab": ["`+secret+`"]}, "pre_tokenizer": {"type": "ByteLevel"}}`)),
			"model vocab: the top-level value is a JSON array, want an object"},
		{"field of the wrong type", write("id.json", []byte(`{"added_tokens": [{"id": "`+secret+`"}], "model": {"type": "BPE"}}`)),
			"field added_tokens.id is a JSON string, want an integer"},
		{"long model type", write("type.json", []byte(`{"model": {"type": "`+long+`"}}`)), `model type "xxxxxxxx`},
		{"long vocabulary entry", write("entry.json", []byte(`{"model": {"type": "BPE", "vocab": {"`+long+`ſ": 1}}, "pre_tokenizer": {"type": "ByteLevel"}}`)),
			"is not byte-level encoded"},
		{"bad split pattern", write("split.json", withSplit(`(`+long)), "split pattern"},
		{"unknown class in split pattern", write("class.json", withSplit(long+`\p{Secret}`)), "split pattern"},
		{"pattern valid only wrapped", write("wrap.json", withSplit(`a)|(?:b`)), "split pattern"},
		{"too large", big, "larger than 256 MiB"},
		{"device", "/dev/zero", "not a regular file"},
		{"FIFO", fifo, "not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.path)
			require.Error(t, err)
			msg := err.Error()
			assert.Contains(t, msg, "load tokenizer")
			assert.Contains(t, msg, c.path)
			assert.Contains(t, msg, c.want)
			assert.NotContains(t, msg, secret)
			assert.Less(t, len(msg), 300, msg)
		})
	}
}

func TestBrief(t *testing.T) {
	assert.Equal(t, `"WordPiece"`, brief("WordPiece"))
	assert.Equal(t, `"`+strings.Repeat("é", 40)+`"…`, brief(strings.Repeat("é", 41)))
}

// TestLoadGzipBomb reads no more of a .gz file than a tokenizer.json can be.
func TestLoadGzipBomb(t *testing.T) {
	defer func(n int64) { maxFileSize = n }(maxFileSize)
	maxFileSize = 1 << 20
	path := filepath.Join(t.TempDir(), "tokenizer.json.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(make([]byte, 4<<20))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.Less(t, buf.Len(), 1<<20)
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	_, err = Load(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than 1 MiB")
}
