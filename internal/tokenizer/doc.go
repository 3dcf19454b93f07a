// Package tokenizer counts tokens the way the model under test does, fully
// offline.
//
// Load resolves a spec into a Tokenizer: a built-in tiktoken encoding
// (o200k_base, the default, or cl100k_base, embedded through
// github.com/pkoukk/tiktoken-go-loader), a Hugging Face tokenizer.json file or
// a directory holding one, or a Hugging Face model id looked up only in the
// local Hugging Face cache. Nothing is ever downloaded.
//
// Encoding is tiktoken's byte-pair encoding, on this package's own engine:
// the text is split into pieces (by hand-written scanners for the known split
// patterns, by regexp2 for others) and each piece is merged from its bytes,
// lowest rank first, in time O(n log n) in its length, so that no reply,
// however long and repetitive, makes counting hang. It gives exactly the ids
// of tiktoken-go, which the tests keep as the reference. The vocabulary is
// kept in compact form (one arena of token bytes, an open-addressing table
// and a Bloom filter; vocab.go), so a process has o200k_base ready in
// ~25 ms instead of the ~200 ms a Go map of its 200,000 strings took.
//
// tokenizer.json files are read by a small adapter onto that engine. It
// supports byte-level BPE models (GPT-2, Llama 3, Qwen 2/2.5/3,
// GPT-OSS and the like) and rejects other model types with an error that names
// the type and the file. Encoding follows Hugging Face's
// add_special_tokens=False: no BOS/EOS is added, while added tokens such as
// <|im_start|> that appear in the text are matched as single tokens, as the
// server's tokenizer matches them. The built-in tiktoken encodings treat
// special-token text as ordinary text (tiktoken's encode_ordinary).
package tokenizer
