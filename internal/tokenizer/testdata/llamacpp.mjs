// Produces llama2.llamacpp.ids.gz, the prompt tokens llama.cpp's server counts for the segments of
// families.corpus.json.gz under the Llama 2 tokenizer (TestLlamaCppPromptTokens).
// Not run by the tests or CI; run it by hand, outside the repository:
//
//   mkdir /tmp/llref && cd /tmp/llref
//   NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --omit=optional node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1
//   cp REPO/internal/tokenizer/testdata/llamacpp.mjs . && node llamacpp.mjs REPO
//
// llama.cpp: the prebuilt CPU library of node-llama-cpp 3.22.1 (@node-llama-cpp/linux-x64, its
// _nlcBuildMetadata.json names ggml-org/llama.cpp). No llama.cpp model of Llama 2 is at hand, so
// the script writes a vocabulary-only GGUF (no tensors, as convert_hf_to_gguf.py --vocab-only
// writes) from llama2.tokenizer.json.gz, in the layout of a converted Llama 2: tokenizer.ggml.model
// "llama" (SentencePiece), the 32,000 pieces with their types (<unk> unknown, <s> and </s> control,
// <0xNN> byte, the rest normal), add_bos_token true, and as each piece's score minus the rank of the
// first merge of tokenizer.json producing it (tokenizer.json's merges are SentencePiece's pieces
// ordered by score, so the order of the scores is the original's; pieces no merge produces score
// 0 and are never the result of a merge in llama.cpp's SentencePiece tokenizer either).
//
// llama-server counts a completions prompt as common_tokenize(vocab, prompt, add_special=true,
// parse_special=true): BOS (the vocabulary's add_bos_token), then the text's tokens with special
// token text matched. node-llama-cpp's model.tokenize(text, true) is common_tokenize(vocab, text,
// add_special=false, parse_special=true); the script prepends BOS as add_special does.
//
// Writes REPO/internal/tokenizer/testdata/llama2.llamacpp.ids.gz: per segment a uvarint count and
// that many uvarint ids, BOS included (the format of FAMILY.ids.gz).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { getLlama } from "node-llama-cpp";

const repo = process.argv[2];
if (!repo) throw new Error("usage: node llamacpp.mjs REPO");
const dir = path.join(repo, "internal/tokenizer/testdata");
const tj = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, "llama2.tokenizer.json.gz"))));
const corpus = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, "families.corpus.json.gz"))));

// --- the vocabulary ---------------------------------------------------------------------------

const n = Object.keys(tj.model.vocab).length;
const pieces = new Array(n);
for (const [piece, id] of Object.entries(tj.model.vocab)) pieces[id] = piece;
const rank = new Map();
tj.model.merges.forEach((m, r) => {
  const [a, b] = Array.isArray(m) ? m : m.split(" ");
  if (!rank.has(a + b)) rank.set(a + b, r);
});
const UNKNOWN = 2, CONTROL = 3, BYTE = 6, NORMAL = 1;
const types = pieces.map((p, id) => (id === 0 ? UNKNOWN : id <= 2 ? CONTROL : /^<0x[0-9A-F]{2}>$/.test(p) ? BYTE : NORMAL));
const scores = pieces.map((p) => (rank.has(p) ? -rank.get(p) : 0));

// --- a GGUF v3 writer -------------------------------------------------------------------------

const T = { u32: 4, i32: 5, f32: 6, bool: 7, str: 8, arr: 9 };
const chunks = [];
const u32 = (x) => { const b = Buffer.alloc(4); b.writeUInt32LE(x); chunks.push(b); };
const u64 = (x) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(x)); chunks.push(b); };
const str = (s) => { const b = Buffer.from(s, "utf8"); u64(b.length); chunks.push(b); };
const value = {
  u32: (x) => u32(x),
  i32: (x) => { const b = Buffer.alloc(4); b.writeInt32LE(x); chunks.push(b); },
  f32: (x) => { const b = Buffer.alloc(4); b.writeFloatLE(x); chunks.push(b); },
  bool: (x) => chunks.push(Buffer.from([x ? 1 : 0])),
  str,
};
const kv = [
  ["general.architecture", "str", "llama"],
  ["general.name", "str", "llama2 vocab only"],
  ["llama.context_length", "u32", 4096],
  ["llama.embedding_length", "u32", 4096],
  ["llama.block_count", "u32", 32],
  ["llama.feed_forward_length", "u32", 11008],
  ["llama.rope.dimension_count", "u32", 128],
  ["llama.attention.head_count", "u32", 32],
  ["llama.attention.head_count_kv", "u32", 32],
  ["llama.attention.layer_norm_rms_epsilon", "f32", 1e-5],
  ["tokenizer.ggml.model", "str", "llama"],
  ["tokenizer.ggml.tokens", ["str"], pieces],
  ["tokenizer.ggml.scores", ["f32"], scores],
  ["tokenizer.ggml.token_type", ["i32"], types],
  ["tokenizer.ggml.bos_token_id", "u32", 1],
  ["tokenizer.ggml.eos_token_id", "u32", 2],
  ["tokenizer.ggml.unknown_token_id", "u32", 0],
  ["tokenizer.ggml.add_bos_token", "bool", true],
  ["tokenizer.ggml.add_eos_token", "bool", false],
];
chunks.push(Buffer.from("GGUF"));
u32(3); // version
u64(0); // tensors
u64(kv.length);
for (const [key, type, v] of kv) {
  str(key);
  if (Array.isArray(type)) {
    u32(T.arr);
    u32(T[type[0]]);
    u64(v.length);
    for (const x of v) value[type[0]](x);
  } else {
    u32(T[type]);
    value[type](v);
  }
}
let gguf = Buffer.concat(chunks);
gguf = Buffer.concat([gguf, Buffer.alloc((32 - (gguf.length % 32)) % 32)]); // general.alignment
const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "llamacpp-")), "llama2-vocab.gguf");
fs.writeFileSync(file, gguf);

// --- llama.cpp's counts -----------------------------------------------------------------------

const llama = await getLlama({ gpu: false, build: "never" });
const model = await llama.loadModel({ modelPath: file, vocabOnly: true });
if (!model.tokens.shouldPrependBosToken || model.tokens.bos !== 1) throw new Error("the vocabulary should add BOS 1");
const out = [];
const uvarint = (x) => { while (x >= 0x80) { out.push((x & 0x7f) | 0x80); x >>>= 7; } out.push(x); };
let total = 0;
for (const seg of corpus) {
  const ids = [model.tokens.bos, ...model.tokenize(seg, true)];
  uvarint(ids.length);
  ids.forEach(uvarint);
  total += ids.length;
}
fs.writeFileSync(path.join(dir, "llama2.llamacpp.ids.gz"), zlib.gzipSync(Buffer.from(out), { level: 9 }));
console.log(`${corpus.length} segments, ${total} prompt tokens (BOS included)`);
await model.dispose();
