package plan

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// systemPrompt checks --system-prompt and --system-prompt-file with
// AIPerf's rules: one of the two, not blank, for an endpoint whose body
// carries messages, and not with the other options that fill the system
// message or share a prefix. The file is read when the cell prepares its
// dataset (bench), before any traffic.
func (v *validator) systemPrompt(p *Profile) {
	if p.SystemPrompt == "" && p.SystemPromptFile == "" {
		return
	}
	name := "system_prompt"
	if p.SystemPrompt == "" {
		name = "system_prompt_file"
	}
	v.check(p.SystemPrompt == "" || p.SystemPromptFile == "", "system_prompt",
		"and --system-prompt-file cannot both be given: set exactly one")
	v.check(p.SystemPrompt == "" || strings.TrimSpace(p.SystemPrompt) != "", "system_prompt",
		"is empty or whitespace only: omit it to run without a system prompt")
	v.check(utf8.ValidString(p.SystemPrompt), "system_prompt", "is not valid UTF-8: give the text in UTF-8, or put it in a file for --system-prompt-file")
	v.check(p.SharedSystemPromptLength == nil, name,
		"cannot be used with --shared-system-prompt-length: both fill the system message, pick one")
	v.check(p.PromptPrefixPoolSize == 0 && p.PromptPrefixLength == 0, name,
		"cannot be used with --prompt-prefix-pool-size/--prompt-prefix-length: they are two ways to share a prefix, pick one")
	v.check(p.Spec().Messages, name, fmt.Sprintf("needs an endpoint type whose body carries messages "+
		"(chat, responses, messages, chat_embeddings), not %s: the text would never be sent", p.EndpointType))
}

// HasSystemPrompt reports whether p sends a verbatim system prompt
// (--system-prompt or --system-prompt-file).
func (p *Profile) HasSystemPrompt() bool { return p.SystemPrompt != "" || p.SystemPromptFile != "" }
