# Cross-checks testdata/reference.json (written by chat.mjs with @huggingface/jinja) against Python's
# Jinja2, the engine of Hugging Face transformers' apply_chat_template and so of vLLM, SGLang and TGI,
# set up as transformers sets it up: ImmutableSandboxedEnvironment(trim_blocks=True,
# lstrip_blocks=True) with the loopcontrols extension and a raise_exception global. Where the two
# engines differ, the reference follows Jinja2: the case keeps what @huggingface/jinja gave under
# "hf_jinja" and takes Jinja2's rendering (or its error). Not run by the tests or CI; after chat.mjs:
#
#   python3 chat_jinja2.py REPO      (Jinja2 3.1: Debian's python3-jinja2)
import json
import sys

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

repo = sys.argv[1]
path = f"{repo}/internal/chattemplate/testdata/reference.json"
ref = json.load(open(path, encoding="utf-8"))


def raise_exception(message):
    raise TemplateError(message)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
env.globals["raise_exception"] = raise_exception
env.filters["tojson"] = lambda x, indent=None: json.dumps(x, ensure_ascii=False, indent=indent)

special = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]
differ = 0
for family, r in ref.items():
    config = json.load(open(f"{repo}/internal/chattemplate/testdata/{family}/tokenizer_config.json", encoding="utf-8"))
    tokens = {}
    for k in special:
        v = config.get(k)
        if isinstance(v, dict):
            v = v.get("content")
        if v:
            tokens[k] = v
    template = env.from_string(config["chat_template"])
    for i, c in enumerate(r["cases"]):
        try:
            got = {"rendered": template.render(messages=c["messages"], add_generation_prompt=c["add_generation_prompt"],
                                               tools=None, documents=None, **tokens)}
        except TemplateError as e:
            got = {"error": str(e)}
        js = {k: c[k] for k in ("rendered", "error") if k in c}
        if got != js:
            differ += 1
            print(f"{family} case {i}: jinja2 {got} != @huggingface/jinja {js}")
            c["hf_jinja"] = js
            c.pop("rendered", None)
            c.pop("error", None)
            c.pop("ids", None)
            c.update(got)
print(differ, "cases differ")
with open(path, "w", encoding="utf-8") as f:
    json.dump(ref, f, ensure_ascii=False, indent=1)
    f.write("\n")
