// Package dataset builds the conversations a benchmark sends: synthetic
// prompts, AIPerf's input files and public datasets.
//
// # Synthetic prompts
//
// Synthetic draws input and output lengths from seeded normal distributions
// and cuts each prompt from an embedded public-domain text (Newton's Opticks;
// or, with --prompt-corpus random, from the tokenizer's vocabulary as `vllm
// bench serve` does: corpora.go) so that it has exactly the drawn number of tokens under the run's tokenizer,
// verified by re-encoding, as AIPerf's synthetic prompt generator does. Open
// without an input file builds synthetic conversations from the same draws
// (a single-turn dataset has exactly Synthetic's prompts), with AIPerf's
// session options: turns per conversation, think-time delays, a shared
// system prompt, a user context per conversation and a pool of prefixes
// prepended to each conversation's first turn ("prefix prompt", as AIPerf's
// current code does, so the first turn has about prefix + 1 + ISL tokens).
//
// # Input files
//
// Open reads --input-file as AIPerf's record types: single_turn (a line per
// request; rows sharing a session_id are one conversation of
// self-contained requests), multi_turn (a line per conversation, lines
// repeating a session_id concatenated, a leading system turn hoisted into
// the system message), random_pool (a file, or a directory of files, drawn
// from with replacement at load) and mooncake_trace (a line per request:
// input_length with optional hash_ids, text_input, messages or payload;
// sessions by session_id); the other traces AIPerf replays, each streamed
// through the same line index: bailian_trace (sessions by parent_chat_id
// chain, bailian.go), burst_gpt_trace (CSV, burstgpt.go),
// sagemaker_data_capture (sagemaker.go), baseten_trace (Parquet rows,
// baseten.go, its sessions sorted by timestamp), weka_trace (a JSON file
// per agentic session, or a directory of them: a session for the main
// agent and one per subagent, weka.go and wekaset.go), tracelab (a
// TraceLab JSONL corpus, optionally gzipped, converted in memory into
// Weka traces behind wekasource.go's seam: tracelab*.go) and AIPerf's
// speed_bench_* configs (SPEED-Bench rows, each a conversation of its
// messages, filtered by category: speedbench.go); and recorded request
// bodies sent as written: raw_payload (a file, or a directory of conversations,
// rawpayload.go) and inputs_json (one JSON document read an entry at a
// time, inputsjson.go); detecting the type from the first record when
// none is given; and public datasets (--public-dataset: sharegpt.go, and
// the one-prompt-a-record aimo and instruct_coder sets, public.go) read
// from a local JSON array, JSON Lines or Parquet file (publicfile.go),
// never downloaded. Several texts of one turn are joined by
// newlines into one message. Media fields (image, images, audio, audios,
// video, videos) are loaded when the file is opened (filemedia.go): URLs
// passed through, data URIs and local files checked and kept once each as
// data URIs; a bad one is a problem of its line.
//
// Every line is checked before Open returns, against AIPerf's schemas and
// the rules between rows (one record type per file, a session's rows
// agree on their input mode, timestamps never go backwards within a
// session, hash_ids fit input_length for the block size, a fixed schedule
// has a start time for every conversation, no timestamp lies more than
// MaxScheduleMs, a year, after the schedule's zero nor beyond 2^53 ms, no
// delay is longer than a day). Every problem is reported as a
// *LineError naming the file, line (and column for JSON errors), field and
// what was expected, up to 50 of them joined with errors.Join; errors quote
// at most a short excerpt of a line.
//
// # Streaming
//
// A JSONL file is read once when it is opened, its lines checked on every
// CPU in bounded batches, and only an index is kept: per row its byte
// offset, length and CRC-32C, per conversation its first line and start
// time, 28 bytes per row for a trace (BenchmarkIndex: flat from 100,000 to
// 1,000,000 rows). Conversation(i) reads the conversation's rows back with
// ReadAt and builds its turns, so a large trace costs the index plus what
// is in flight, and a Dataset is safe for concurrent use. The file must not
// change while it is replayed: a row read back from a file whose size or
// modification time changed since it was opened, or whose text is not the
// one indexed, is refused with ErrInputChanged (changed.go). Offsets (--fixed-schedule-start-offset,
// -end-offset) drop rows at load; Schedule lists each conversation's start
// in ascending order, shifted so that the first is 0 with auto-offset, or
// to the start offset.
//
// # Prompts from hash ids
//
// A mooncake row's prompt is exactly input_length tokens, built from the
// blocks of its hash_ids: each hash id is a block of BlockSize (512) words
// chosen by SplitMix64 seeded with (seed, hash id), the last block cut to
// its first words so that the total is input_length. Blocks are words, not
// decoded token windows, so that their boundaries survive re-tokenization:
// the words are those of the corpus such that a space followed by the word
// is one token under the run's tokenizer (about 1,170 of them under
// o200k_base, cl100k_base or Qwen3). Under every byte-level BPE split
// pattern a space followed by letters starts a new pre-tokenization piece,
// so no merge crosses from one word to the next: the prompt encodes to one
// token per word (exactly input_length), and two rows whose hash ids share
// their first j ids share exactly their first j×512 token ids, which is the
// sharing a server's prefix cache must see. The vocabulary is checked when
// it is built, by encoding every word after other words. Blocks are
// regenerated on every use (no cache): a 100,000-line trace of ~8k-token
// prompts is indexed in about 0.5 s and every prompt written in about 8 s
// on two cores (BenchmarkTraceReplay, ~100M tokens/s). Rows without
// hash_ids, and the tail of a row whose input_length exceeds its blocks,
// get fresh words keyed by the row.
//
// # Sampling
//
// Sampler hands out conversation indices in AIPerf's orders: "shuffle" (a
// fresh permutation of all entries on every pass), "sequential" and
// "random". Dataset.Sampling gives AIPerf's default for the data: shuffle
// for synthetic data and random_pool, sequential for the other files.
package dataset
