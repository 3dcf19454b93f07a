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
