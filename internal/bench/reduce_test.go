package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// Every metric --goodput accepts is a record metric the summary computes.
func TestGoodputTagsAreRecordMetrics(t *testing.T) {
	for _, tag := range plan.GoodputTags {
		assert.Contains(t, metrics.RecordTags(), tag)
	}
}

// A Hugging Face model counted with a built-in encoding gets a warning,
// which says the model's tokenizer is in the local cache only when it is;
// a model's own tokenizer, or a name that is not a Hugging Face id, does
// not.
func TestForeignTokenizerWarning(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	p := plan.NewProfile()
	p.Model = []string{"meta-llama/Llama-3.1-8B-Instruct"}
	assert.Contains(t, foreignTokenizer(p), "not meta-llama/Llama-3.1-8B-Instruct's own tokenizer: put it in the local Hugging Face "+
		"cache (huggingface-cli download meta-llama/Llama-3.1-8B-Instruct tokenizer.json) and pass --tokenizer")
	snap := filepath.Join(cache, "models--meta-llama--Llama-3.1-8B-Instruct", "snapshots", "abc")
	require.NoError(t, os.MkdirAll(snap, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(snap, "tokenizer.json"), []byte("{}"), 0o644))
	assert.Contains(t, foreignTokenizer(p), "own tokenizer: pass --tokenizer meta-llama/Llama-3.1-8B-Instruct (it is in the local Hugging Face cache)")
	p.Tokenizer = "builtin" // AIPerf's name for it: the warning names the encoding
	assert.Contains(t, foreignTokenizer(p), "built-in "+tokenizer.Default+" encoding")
	assert.Contains(t, foreignTokenizer(p), "(or --use-server-token-count to take the server's usage)")
	p.UseServerTokenCount = true // not suggested again once given
	assert.Contains(t, foreignTokenizer(p), "(--use-server-token-count takes the server's usage where it is trusted)")
	p.UseServerTokenCount = false
	p.Tokenizer = "meta-llama/Llama-3.1-8B-Instruct"
	assert.Empty(t, foreignTokenizer(p))
	p.Tokenizer, p.Model = "", []string{"mock-model"}
	assert.Empty(t, foreignTokenizer(p))
}

// A model served from a local path (vLLM's) gets only the --tokenizer
// advice: no download fills a path (it said `huggingface-cli download
// /models/…`), and it is not in the Hugging Face cache.
func TestForeignTokenizerLocalPath(t *testing.T) {
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.MkdirAll(filepath.Join("org", "model"), 0o755))
	p := plan.NewProfile()
	for _, m := range []string{"/models/hub/models--org--m/snapshots/0e9e39f249a16976918f6564b8830bc894c89659", "./m",
		"org/model", filepath.Join(dir, "org", "model")} {
		p.Model = []string{m}
		w := foreignTokenizer(p)
		assert.Contains(t, w, "own tokenizer: pass --tokenizer "+m+" (the model's directory, holding its tokenizer.json) "+
			"or the path of its tokenizer.json, for exact counts", m)
		assert.NotContains(t, w, "huggingface-cli", m)
		assert.NotContains(t, w, "Hugging Face cache", m)
	}
	p.Model = []string{"org/other"} // a model id, no directory here
	assert.Contains(t, foreignTokenizer(p), "huggingface-cli download org/other tokenizer.json")
}
