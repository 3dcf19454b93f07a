package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSystemPromptChecks(t *testing.T) {
	ok := func(mut func(p *Profile)) error {
		p := valid()
		mut(&p)
		return p.Check()
	}
	assert.NoError(t, ok(func(p *Profile) { p.SystemPrompt = "Be brief." }))
	assert.NoError(t, ok(func(p *Profile) { p.SystemPromptFile = "sys.txt"; p.UserContextPromptLength = Ptr(10) }),
		"with a user context: AIPerf's two tiers")
	assert.NoError(t, ok(func(p *Profile) { p.SystemPrompt = "x"; p.CacheBust = CacheBustWarmupIsolationSystem }),
		"a verbatim system prompt is a system message to mark")
	for _, tc := range []struct {
		mut  func(p *Profile)
		want string
	}{
		{func(p *Profile) { p.SystemPrompt, p.SystemPromptFile = "a", "b" }, "--system-prompt and --system-prompt-file cannot both be given"},
		{func(p *Profile) { p.SystemPrompt = " \n" }, "--system-prompt is empty or whitespace only"},
		{func(p *Profile) { p.SystemPrompt = "\xff" }, "--system-prompt is not valid UTF-8"},
		{func(p *Profile) { p.SystemPromptFile = "f"; p.SharedSystemPromptLength = Ptr(5) }, "--system-prompt-file cannot be used with --shared-system-prompt-length"},
		{func(p *Profile) { p.SystemPrompt = "a"; p.PromptPrefixPoolSize, p.PromptPrefixLength = 2, 8 }, "--system-prompt cannot be used with --prompt-prefix-pool-size"},
		{func(p *Profile) { p.SystemPrompt = "a"; p.EndpointType = EndpointEmbeddings }, "--system-prompt needs an endpoint type whose body carries messages"},
	} {
		assert.ErrorContains(t, ok(tc.mut), tc.want)
	}
}
