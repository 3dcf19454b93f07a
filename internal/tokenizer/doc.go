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
// tokenizer.json files are read in one of two ways. Byte-level BPE with
// one split pattern (GPT-2, Llama 3, Qwen 2/2.5/3, GPT-OSS and the like)
// runs on that engine, its ids serving as merge ranks. Every other file runs
// as a pipeline of Hugging Face's own stages (pipeline.go): added tokens,
// normalizers (NFC/NFD/NFKC/NFKD, Lowercase, StripAccents, Strip, Prepend,
// Replace, BertNormalizer), pre-tokenizers (ByteLevel, Split with every
// behavior, Metaspace, BertPreTokenizer, WhitespaceSplit, Sequence) and a
// model: BPE merged by its merges list (SentencePiece-style with byte_fallback
// as in Llama 2, Mistral and Gemma, or byte-level after several Splits as in
// DeepSeek V3; pairmerge.go) or WordPiece (BERT; wordpiece.go). Other model
// types (Unigram) and stages are rejected with an error that names them and
// the file. testdata/ holds real tokenizers of each family and the ids that
// Hugging Face's tokenizers give on a 1 MiB mixed corpus, which the tests
// match exactly.
//
// Encoding follows Hugging Face's add_special_tokens=False, as AIPerf
// counts: no BOS/EOS, [CLS] or [SEP] is added, while added tokens such as
// <|im_start|> that appear in the text are matched as single tokens, as the
// server's tokenizer matches them. The built-in tiktoken encodings treat
// special-token text as ordinary text (tiktoken's encode_ordinary).
package tokenizer
