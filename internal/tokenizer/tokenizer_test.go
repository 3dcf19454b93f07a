package tokenizer

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"
)

const qwen3Path = "testdata/qwen3.tokenizer.json.gz"

// loadQwen3 loads the Qwen3 test tokenizer once for all tests.
var loadQwen3 = sync.OnceValues(func() (Tokenizer, error) { return Load(qwen3Path) })

func qwen3(tb testing.TB) Tokenizer {
	tb.Helper()
	tok, err := loadQwen3()
	require.NoError(tb, err)
	return tok
}

type fixture struct {
	Name string `json:"name"`
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

func readGold(tb testing.TB, path string) []fixture {
	tb.Helper()
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	var fs []fixture
	require.NoError(tb, json.Unmarshal(data, &fs))
	require.NotEmpty(tb, fs)
	return fs
}

func TestEncodeMatchesReference(t *testing.T) {
	cases := []struct {
		spec, gold string
		normalize  func(string) string
	}{
		{spec: "o200k_base", gold: "testdata/o200k_base.gold.json"},
		{spec: "cl100k_base", gold: "testdata/cl100k_base.gold.json"},
		{spec: qwen3Path, gold: "testdata/qwen3.gold.json", normalize: norm.NFC.String},
	}
	for _, c := range cases {
		var tok Tokenizer
		if c.spec == qwen3Path {
			tok = qwen3(t)
		} else {
			var err error
			tok, err = Load(c.spec)
			require.NoError(t, err)
		}
		for _, f := range readGold(t, c.gold) {
			t.Run(c.spec+"/"+f.Name, func(t *testing.T) {
				ids := tok.Encode(f.Text)
				assert.Equal(t, f.IDs, nonNil(ids))
				assert.Equal(t, len(f.IDs), tok.Count(f.Text))
				want := f.Text
				if c.normalize != nil {
					want = c.normalize(want)
				}
				assert.Equal(t, want, tok.Decode(f.IDs), "decode round-trips")
			})
		}
	}
}

func nonNil(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

func TestO200kKnownCounts(t *testing.T) {
	tok, err := Load("")
	require.NoError(t, err)
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Hello, world!", 4},
		{"\t\n\t\n", 1},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			assert.Equal(t, c.want, tok.Count(c.text))
		})
	}
	t.Run("special-token text is ordinary text", func(t *testing.T) {
		ids := tok.Encode("<|endoftext|>")
		assert.Greater(t, len(ids), 1)
		assert.NotContains(t, ids, 199999)
		assert.Equal(t, "<|endoftext|>", tok.Decode(ids))
	})
}

func TestLoadBuiltins(t *testing.T) {
	def, err := Load("")
	require.NoError(t, err)
	assert.Equal(t, "o200k_base", def.Name())
	for _, spec := range []string{"builtin", "o200k_base"} {
		tok, err := Load(spec)
		require.NoError(t, err)
		assert.Same(t, def, tok, "built-ins are built once and shared")
	}
	cl, err := Load("cl100k_base")
	require.NoError(t, err)
	assert.Equal(t, "cl100k_base", cl.Name())
	assert.Equal(t, []int{15339, 1917}, cl.Encode("hello world"))
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		spec string
		want []string
	}{
		{"o300k_base", []string{`unknown tokenizer "o300k_base"`, "o200k_base, cl100k_base"}},
		{"./nope/tokenizer.json", []string{"./nope/tokenizer.json does not exist"}},
		{"testdata/missing.json", []string{"testdata/missing.json does not exist"}},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			_, err := Load(c.spec)
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestTinyByteLevel(t *testing.T) {
	path := "testdata/gpt2-tiny.tokenizer.json"
	tok, err := Load(path)
	require.NoError(t, err)
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	assert.Equal(t, abs, tok.Name())
	// Expected ids checked against @lenml/tokenizers@3.7.2.
	cases := []struct {
		text string
		ids  []int
	}{
		{" the hello world", []int{258, 260, 259, 111, 265}},
		{"hello<|im|>x<|im|>y<|endoftext|>", []int{256, 259, 111, 268, 267, 121, 266}},
		{"the  world\n\n", []int{116, 256, 32, 265, 10, 10}},
		{"héllo 👋", []int{104, 195, 169, 259, 111, 32, 240, 159, 145, 139}},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			assert.Equal(t, c.ids, tok.Encode(c.text))
			assert.Equal(t, c.text, tok.Decode(c.ids))
		})
	}
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/gpt2-tiny.tokenizer.json", filepath.Join(dir, "tokenizer.json"))
	tok, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "tokenizer.json"), tok.Name())
	assert.Equal(t, []int{258}, tok.Encode(" the"))

	file, err := Locate(dir, "")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "tokenizer.json"), file)
	for _, spec := range []string{"", "builtin", "cl100k_base"} {
		file, err = Locate(spec, "")
		require.NoError(t, err)
		assert.Empty(t, file, "a built-in has no file")
	}

	_, err = Load(t.TempDir())
	require.Error(t, err, "a directory without tokenizer.json")
	assert.Contains(t, err.Error(), "tokenizer.json")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
	require.NoError(t, os.WriteFile(to, data, 0o644))
}

func TestHubCache(t *testing.T) {
	const id = "acme/tiny-gpt2"
	const sha = "0123456789abcdef0123456789abcdef01234567"
	repo := func(root string) string { return filepath.Join(root, "models--acme--tiny-gpt2") }
	snapshot := func(root, sha string) string {
		return filepath.Join(repo(root), "snapshots", sha, "tokenizer.json")
	}
	cases := []struct {
		name    string
		setup   func(t *testing.T, root string)
		wantErr []string // substrings, with ROOT standing for the cache root
	}{
		{
			name: "refs/main names the snapshot",
			setup: func(t *testing.T, root string) {
				copyFile(t, "testdata/gpt2-tiny.tokenizer.json", snapshot(root, sha))
				copyFile(t, "testdata/wordpiece.tokenizer.json", snapshot(root, "other"))
				require.NoError(t, os.MkdirAll(filepath.Join(repo(root), "refs"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(repo(root), "refs", "main"), []byte(sha+"\n"), 0o644))
			},
		},
		{
			name: "no refs, one snapshot",
			setup: func(t *testing.T, root string) {
				copyFile(t, "testdata/gpt2-tiny.tokenizer.json", snapshot(root, sha))
			},
		},
		{
			name:  "not cached",
			setup: func(*testing.T, string) {},
			wantErr: []string{
				"not found in the local Hugging Face cache",
				"ROOT/models--acme--tiny-gpt2/refs/main: missing",
				"ROOT/models--acme--tiny-gpt2/snapshots: missing",
				"huggingface-cli download acme/tiny-gpt2",
				"path of a tokenizer.json",
			},
		},
		{
			name: "refs/main names a snapshot without tokenizer.json",
			setup: func(t *testing.T, root string) {
				require.NoError(t, os.MkdirAll(filepath.Join(repo(root), "refs"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(repo(root), "refs", "main"), []byte(sha), 0o644))
			},
			wantErr: []string{
				"ROOT/models--acme--tiny-gpt2/refs/main: names snapshot " + sha,
				"ROOT/models--acme--tiny-gpt2/snapshots/" + sha + "/tokenizer.json: missing",
			},
		},
		{
			name: "no refs, two snapshots",
			setup: func(t *testing.T, root string) {
				copyFile(t, "testdata/gpt2-tiny.tokenizer.json", snapshot(root, "a"))
				copyFile(t, "testdata/gpt2-tiny.tokenizer.json", snapshot(root, "b"))
			},
			wantErr: []string{"ROOT/models--acme--tiny-gpt2/snapshots: 2 snapshots, cannot choose one without refs/main"},
		},
	}
	for _, c := range cases {
		for _, env := range []string{"HF_HUB_CACHE", "HF_HOME"} {
			t.Run(c.name+"/"+env, func(t *testing.T) {
				dir := t.TempDir()
				root := dir
				if env == "HF_HOME" {
					root = filepath.Join(dir, "hub")
					t.Setenv("HF_HUB_CACHE", "")
				}
				t.Setenv(env, dir)
				c.setup(t, root)
				tok, err := Load(id)
				if c.wantErr != nil {
					require.Error(t, err)
					for _, w := range c.wantErr {
						assert.Contains(t, err.Error(), strings.ReplaceAll(w, "ROOT", root))
					}
					return
				}
				require.NoError(t, err)
				assert.Equal(t, id, tok.Name())
				assert.Equal(t, []int{258}, tok.Encode(" the"))
			})
		}
	}
}

func TestHubCacheRootDefault(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	root := func() string {
		r, err := hubCacheRoot()
		require.NoError(t, err)
		return r
	}
	assert.Equal(t, filepath.Join(home, ".cache", "huggingface", "hub"), root())
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "xdg"))
	assert.Equal(t, filepath.Join(home, "xdg", "huggingface", "hub"), root())

	// No home and nothing set: no cache to look in, said so (not a "~"
	// directory searched relative to the working directory).
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	_, err := findInHubCache("org/model", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "load tokenizer org/model: no Hugging Face cache to look in")
	assert.Contains(t, err.Error(), "set HF_HUB_CACHE, or give --tokenizer a tokenizer.json path")
}

func TestUnsupportedTokenizers(t *testing.T) {

	byteVocab := map[string]int{}
	for b := range 256 {
		if r := runeOfByte(byte(b)); r >= 0 {
			byteVocab[string(r)] = b
		}
	}
	byteLevel := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}
	split := func(re string) map[string]any {
		return map[string]any{"type": "Split", "pattern": map[string]any{"Regex": re}, "behavior": "Isolated", "invert": false}
	}
	// A vocabulary spelt with a rune outside the byte-level alphabet.
	spVocab := map[string]int{"▁hello": 256}
	for k, v := range byteVocab {
		spVocab[k] = v
	}
	bpeModel := func(extra map[string]any) map[string]any {
		m := map[string]any{"type": "BPE", "vocab": byteVocab, "merges": []string{}}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name string
		file map[string]any
		want string
	}{
		{"Unigram", map[string]any{"model": map[string]any{"type": "Unigram", "vocab": [][]any{{"a", -1.0}}}}, `model type "Unigram"`},
		{"Precompiled normalizer", map[string]any{"normalizer": map[string]any{"type": "Precompiled"}, "pre_tokenizer": byteLevel, "model": bpeModel(nil)},
			`normalizer type "Precompiled"`},
		{"Digits pre-tokenizer", map[string]any{"pre_tokenizer": map[string]any{"type": "Digits"}, "model": bpeModel(nil)}, `pre-tokenizer type "Digits"`},
		{"Split behavior", map[string]any{"pre_tokenizer": map[string]any{"type": "Split", "pattern": map[string]any{"String": " "}, "behavior": "Sideways"},
			"model": bpeModel(nil)}, `behavior "Sideways"`},
		{"Metaspace prepend_scheme", map[string]any{"pre_tokenizer": map[string]any{"type": "Metaspace", "prepend_scheme": "sometimes"},
			"model": bpeModel(nil)}, `prepend_scheme "sometimes"`},
		{"BPE with a suffix", map[string]any{"pre_tokenizer": split(`\s+`), "model": bpeModel(map[string]any{"end_of_word_suffix": "</w>"})},
			"end_of_word_suffix"},
		{"WordPiece after ByteLevel", map[string]any{"pre_tokenizer": byteLevel,
			"model": map[string]any{"type": "WordPiece", "vocab": map[string]int{"[UNK]": 0}}}, "WordPiece with a ByteLevel pre-tokenizer"},
		{"not byte-level vocabulary", map[string]any{"pre_tokenizer": byteLevel, "model": bpeModel(map[string]any{"vocab": spVocab})},
			`vocabulary entry "▁hello" is not byte-level encoded`},
		{"missing byte", map[string]any{"pre_tokenizer": byteLevel, "model": bpeModel(map[string]any{"vocab": map[string]int{"a": 0}})},
			"vocabulary lacks byte 0x00"},
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokenizer.json")
			data, err := json.Marshal(c.file)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data, 0o644))
			_, err = Load(path)
			require.ErrorIs(t, err, ErrUnsupported)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), path)
		})
	}
}

// runeOfByte is GPT-2's bytes_to_unicode, the inverse of byteOfRune.
func runeOfByte(b byte) rune {
	for r, v := range byteOfRune {
		if v == int16(b) {
			return rune(r)
		}
	}
	return -1
}

func TestSplitPatternKeepsGaps(t *testing.T) {
	// An Isolated split keeps the text between matches; tiktoken alone would
	// drop it.
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/gpt2-tiny.tokenizer.json")
	require.NoError(t, err)
	var f map[string]any
	require.NoError(t, json.Unmarshal(data, &f))
	f["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
		map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\d+`}, "behavior": "Isolated", "invert": false},
		map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
	}}
	data, err = json.Marshal(f)
	require.NoError(t, err)
	path := filepath.Join(dir, "tokenizer.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	tok, err := Load(path)
	require.NoError(t, err)
	// "he" merges inside the gap piece; " t" cannot merge across "1".
	assert.Equal(t, []int{256, 32, 49, 116}, tok.Encode("he 1t"))
	assert.Equal(t, "he 1t", tok.Decode(tok.Encode("he 1t")))
}

func TestConcurrentEncode(t *testing.T) {
	o200k, err := Load("o200k_base")
	require.NoError(t, err)
	for _, tc := range []struct {
		tok  Tokenizer
		gold string
	}{{o200k, "testdata/o200k_base.gold.json"}, {qwen3(t), "testdata/qwen3.gold.json"}} {
		fs := readGold(t, tc.gold)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			wg.Go(func() {
				for i := range 50 {
					f := fs[(g+i)%len(fs)]
					if got := nonNil(tc.tok.Encode(f.Text)); !assert.ObjectsAreEqual(f.IDs, got) {
						errs <- errors.New(tc.tok.Name() + ": " + f.Name + ": ids differ under concurrency")
						return
					}
					_ = tc.tok.Decode(f.IDs)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// TestHubCacheRevision looks up revisions as huggingface_hub caches them: a
// branch or tag under refs/ (nested, as refs/pr/1) naming a snapshot, or a
// commit hash that is one.
func TestHubCacheRevision(t *testing.T) {
	const id = "acme/tiny"
	root := t.TempDir()
	t.Setenv("HF_HUB_CACHE", root)
	repo := filepath.Join(root, "models--acme--tiny")
	snapshot := func(sha, from string) {
		copyFile(t, from, filepath.Join(repo, "snapshots", sha, "tokenizer.json"))
	}
	ref := func(name, sha string) {
		path := filepath.Join(repo, "refs", filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(sha+"\n"), 0o644))
	}
	snapshot("aaaa", "testdata/gpt2-tiny.tokenizer.json")
	snapshot("bbbb", "testdata/wordpiece.tokenizer.json")
	snapshot("cccc", tinySplitPath)
	ref("main", "aaaa")
	ref("v1", "bbbb")
	ref("pr/1", "cccc")

	for _, c := range []struct{ revision, name, kind string }{
		{"", id, "byte-level BPE"},
		{"main", id, "byte-level BPE"},
		{"v1", id + "@v1", "WordPiece"},
		{"pr/1", id + "@pr/1", "byte-level BPE"},
		{"bbbb", id + "@bbbb", "WordPiece"},
	} {
		tok, err := LoadRevision(id, c.revision)
		require.NoError(t, err, c.revision)
		assert.Equal(t, c.name, tok.Name())
		assert.Equal(t, c.name+" (tokenizer.json, "+c.kind+")", Describe(tok))
	}

	_, err := LoadRevision(id, "v2")
	require.Error(t, err)
	for _, want := range []string{
		filepath.Join(repo, "refs", "v2") + ": missing",
		filepath.Join(repo, "snapshots", "v2", "tokenizer.json") + ": missing",
		"huggingface-cli download acme/tiny tokenizer.json --revision v2",
	} {
		assert.Contains(t, err.Error(), want)
	}
	for revision, sha := range map[string]string{"": "aaaa", "v1": "bbbb", "cccc": "cccc"} {
		file, err := Locate(id, revision)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(repo, "snapshots", sha, "tokenizer.json"), file, "the snapshot's, beside its tokenizer_config.json")
	}
	for _, bad := range []string{"../../etc", "/etc", `a\b`} {
		_, err = LoadRevision(id, bad)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is not a branch, tag or commit hash")
	}
	for _, spec := range []string{"", "builtin", "o200k_base", "testdata/gpt2-tiny.tokenizer.json"} {
		_, err = LoadRevision(spec, "v1")
		require.Error(t, err, spec)
		assert.Contains(t, err.Error(), `revision "v1" applies only to a Hugging Face model id`)
		_, err = LoadRevision(spec, "main")
		require.NoError(t, err, spec)
	}
}

func TestDescribe(t *testing.T) {
	o200k, err := Load("")
	require.NoError(t, err)
	assert.Equal(t, "o200k_base (built-in tiktoken encoding)", Describe(o200k))
	assert.Regexp(t, `/testdata/qwen3\.tokenizer\.json\.gz \(tokenizer\.json, byte-level BPE\)$`, Describe(qwen3(t)))
	for name, kind := range map[string]string{
		"llama2":            "SentencePiece BPE with byte fallback",
		"deepseek_v3":       "byte-level BPE",
		"bert-base-uncased": "WordPiece",
	} {
		assert.Contains(t, Describe(loadFamily(t, name)), "(tokenizer.json, "+kind+")")
	}
}
