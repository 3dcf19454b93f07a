// Package chattemplate renders a model's chat template, as the server does
// before it tokenizes a chat request, so that the client can count ISL the
// way the model sees it (AIPerf's --apply-chat-template).
//
// Load reads the template beside a tokenizer.json: chat_template.jinja
// when there is one (transformers has saved templates there since 2025 and
// reads that file first), else the "chat_template" of tokenizer_config.json
// (a string or a list of named templates, of which "default" is taken),
// with the special tokens a template reads (bos_token, eos_token and the
// like) from the latter. Render runs it with internal/jinja (a fork of
// github.com/ardanlabs/jinja whose renders are bounded) on a conversation,
// with add_generation_prompt=true as AIPerf renders it: the output is the
// text to encode, without adding special tokens, since the template writes
// them. A render is bounded in steps, bytes and call depth (DefaultSteps,
// BaseBytes, MaxDepth, plus the conversation's share) and stops when its
// context ends: a template comes with a model and is not trusted.
//
// Messages extracts the conversation from a request body as AIPerf does:
// the role and the joined text parts of each item of a "messages" or
// "input" array, the replayed tool calls passed through, and the text of the
// tool schemas and function-call items, which AIPerf counts on top of the
// rendered template.
//
// testdata/ holds the templates of Llama 3, Mistral, Qwen 2.5 (ChatML),
// DeepSeek V3 and Gemma 3 and what Hugging Face's JavaScript Jinja engine
// renders for a set of conversations (and the token ids of the rendering,
// where the family's tokenizer is committed), which the tests match
// exactly.
package chattemplate
