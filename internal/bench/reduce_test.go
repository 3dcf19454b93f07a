package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"

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

// A Hugging Face model counted with a built-in encoding gets a warning; a
// model's own tokenizer, or a name that is not a Hugging Face id, does not.
func TestForeignTokenizerWarning(t *testing.T) {
	p := plan.NewProfile()
	p.Model = []string{"meta-llama/Llama-3.1-8B-Instruct"}
	assert.Contains(t, foreignTokenizer(p), "not meta-llama/Llama-3.1-8B-Instruct's own tokenizer")
	p.Tokenizer = "builtin" // AIPerf's name for it: the warning names the encoding
	assert.Contains(t, foreignTokenizer(p), "built-in "+tokenizer.Default+" encoding")
	p.Tokenizer = "meta-llama/Llama-3.1-8B-Instruct"
	assert.Empty(t, foreignTokenizer(p))
	p.Tokenizer, p.Model = "", []string{"mock-model"}
	assert.Empty(t, foreignTokenizer(p))
}
