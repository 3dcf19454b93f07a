package dataset

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
)

// codingText is the text of --prompt-corpus coding (AIPerf's "procedural
// coding / tool-use content"): what a coding agent's context is made of,
// generated once from a fixed seed so every run and every machine cuts its
// prompts from the same text. Source files in Python, Go and TypeScript,
// shell sessions, unified diffs, test output, and OpenAI-style tool calls
// with their results, in the proportions of an agent's working context
// (mostly code, then tool traffic).
var codingText = sync.OnceValue(func() string {
	g := coder{r: rand.New(rand.NewPCG(0x636f6465, 0x636f7270)), b: &strings.Builder{}}
	for g.b.Len() < codingCorpusBytes {
		switch g.r.IntN(10) {
		case 0, 1, 2:
			g.python()
		case 3, 4:
			g.golang()
		case 5:
			g.typescript()
		case 6:
			g.shell()
		case 7:
			g.diff()
		default:
			g.toolCall()
		}
		g.b.WriteByte('\n')
	}
	return g.b.String()
})

// codingCorpusBytes is the corpus's size: as large as the prose corpus's
// order, so that long prompts rarely wrap around.
const codingCorpusBytes = 256 << 10

var (
	codeVerbs = []string{"load", "parse", "build", "render", "fetch", "resolve", "merge", "validate", "encode", "decode",
		"schedule", "flush", "retry", "index", "split", "collect", "normalize", "apply", "emit", "drain"}
	codeNouns = []string{"config", "request", "session", "token", "block", "cache", "record", "batch", "header", "payload",
		"manifest", "route", "worker", "metric", "shard", "buffer", "snapshot", "schema", "prompt", "result"}
	codeTypes = []string{"int", "str", "bool", "float", "bytes", "list[str]", "dict[str, int]", "Optional[str]"}
	goTypes   = []string{"int", "string", "bool", "float64", "[]byte", "[]string", "map[string]int", "error", "time.Duration"}
	codeFiles = []string{"server", "client", "cache", "scheduler", "tokenizer", "router", "store", "metrics", "worker", "config"}
	codeDirs  = []string{"src", "internal", "pkg", "lib", "app", "tests"}
	codeTools = []string{"read_file", "write_file", "run_command", "search_code", "list_directory", "apply_patch", "run_tests"}
	codeWords = []string{"the", "a", "every", "this", "its", "when", "before", "after", "if", "unless", "once", "each"}
)

// coder writes the corpus's pieces with its random source.
type coder struct {
	r *rand.Rand
	b *strings.Builder
}

func (g *coder) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *coder) name() string { return g.pick(codeVerbs) + "_" + g.pick(codeNouns) }

func (g *coder) camel() string {
	return g.pick(codeVerbs) + title(g.pick(codeNouns))
}

func (g *coder) path(ext string) string {
	return g.pick(codeDirs) + "/" + g.pick(codeFiles) + "_" + g.pick(codeNouns) + ext
}

func (g *coder) sentence() string {
	return fmt.Sprintf("%s %s %s %s the %s", title(g.pick(codeVerbs)),
		g.pick(codeWords), g.pick(codeNouns), g.pick(codeWords), g.pick(codeNouns))
}

// title is word with its first letter upper-case (the words are ASCII).
func title(word string) string { return strings.ToUpper(word[:1]) + word[1:] }

func (g *coder) python() {
	fn, arg := g.name(), g.pick(codeNouns)
	fmt.Fprintf(g.b, "# %s\ndef %s(%s: %s, limit: int = %d) -> %s:\n    \"\"\"%s.\"\"\"\n",
		g.path(".py"), fn, arg, g.pick(codeTypes), 8<<g.r.IntN(6), g.pick(codeTypes), g.sentence())
	for range 2 + g.r.IntN(5) {
		switch g.r.IntN(4) {
		case 0:
			fmt.Fprintf(g.b, "    if not %s:\n        raise ValueError(\"%s: empty %s\")\n", arg, fn, arg)
		case 1:
			fmt.Fprintf(g.b, "    for i, %s in enumerate(%s[:limit]):\n        %s.append(%s(%s, i))\n",
				g.pick(codeNouns), arg, g.pick(codeNouns)+"s", g.name(), arg)
		case 2:
			fmt.Fprintf(g.b, "    %s = self.%s.get(%q, %d)\n", g.pick(codeNouns), g.pick(codeNouns), g.pick(codeNouns), g.r.IntN(1000))
		default:
			fmt.Fprintf(g.b, "    logger.debug(\"%s %%s\", %s)\n", g.sentence(), arg)
		}
	}
	fmt.Fprintf(g.b, "    return %s(%s)\n", g.name(), arg)
}

func (g *coder) golang() {
	fn, arg := g.camel(), g.pick(codeNouns)
	fmt.Fprintf(g.b, "// %s\n// %s %s.\nfunc (s *%s) %s(ctx context.Context, %s %s) (%s, error) {\n",
		g.path(".go"), fn, strings.ToLower(g.sentence()), title(g.pick(codeFiles)),
		fn, arg, g.pick(goTypes), g.pick(goTypes))
	for range 2 + g.r.IntN(4) {
		switch g.r.IntN(3) {
		case 0:
			fmt.Fprintf(g.b, "\tif err := s.%s(ctx, %s); err != nil {\n\t\treturn nil, fmt.Errorf(\"%s %s: %%w\", err)\n\t}\n",
				g.camel(), arg, g.pick(codeVerbs), g.pick(codeNouns))
		case 1:
			fmt.Fprintf(g.b, "\tfor i := range %s {\n\t\ts.%s[i] = %s(%s[i])\n\t}\n", arg, g.pick(codeNouns)+"s", g.camel(), arg)
		default:
			fmt.Fprintf(g.b, "\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\ts.%s += %d\n", g.pick(codeNouns)+"Count", 1+g.r.IntN(64))
		}
	}
	fmt.Fprintf(g.b, "\treturn s.%s(%s), nil\n}\n", g.camel(), arg)
}

func (g *coder) typescript() {
	fn, arg := g.camel(), g.pick(codeNouns)
	fmt.Fprintf(g.b, "// %s\nexport async function %s(%s: %s[]): Promise<number> {\n  const seen = new Map<string, number>();\n",
		g.path(".ts"), fn, arg, title(arg))
	fmt.Fprintf(g.b, "  for (const item of %s) {\n    seen.set(item.%s, (seen.get(item.%s) ?? 0) + %d);\n  }\n",
		arg, g.pick(codeNouns), g.pick(codeNouns), 1+g.r.IntN(9))
	fmt.Fprintf(g.b, "  return await %s(seen.size);\n}\n", g.camel())
}

func (g *coder) shell() {
	file := g.path(".py")
	fmt.Fprintf(g.b, "$ git diff --stat\n %s | %d %s\n 1 file changed, %d insertions(+), %d deletions(-)\n",
		file, 2+g.r.IntN(40), strings.Repeat("+", 1+g.r.IntN(12)), 1+g.r.IntN(30), g.r.IntN(12))
	fmt.Fprintf(g.b, "$ pytest -q tests/test_%s.py\n%s\n%d passed, %d failed in %.2fs\n",
		g.pick(codeFiles), strings.Repeat(".", 3+g.r.IntN(20)), 3+g.r.IntN(40), g.r.IntN(3), g.r.Float64()*9)
}

func (g *coder) diff() {
	file, fn := g.path(".go"), g.camel()
	line := 10 + g.r.IntN(400)
	fmt.Fprintf(g.b, "--- a/%s\n+++ b/%s\n@@ -%d,4 +%d,5 @@ func %s(\n", file, file, line, line, fn)
	fmt.Fprintf(g.b, " \t%s := s.%s()\n-\treturn %s, nil\n+\tif %s == nil {\n+\t\treturn nil, err%s\n+\t}\n",
		g.pick(codeNouns), g.camel(), g.pick(codeNouns), g.pick(codeNouns), title(g.pick(codeNouns))+"Missing")
}

func (g *coder) toolCall() {
	tool, id := g.pick(codeTools), fmt.Sprintf("call_%08x", g.r.Uint32())
	var args string
	switch tool {
	case "run_command", "run_tests":
		args = fmt.Sprintf(`{\"command\": \"go test ./%s/... -run Test%s\"}`, g.pick(codeDirs), title(g.camel()))
	case "search_code":
		args = fmt.Sprintf(`{\"pattern\": \"func %s\", \"path\": \"%s\"}`, g.camel(), g.pick(codeDirs))
	default:
		args = fmt.Sprintf(`{\"path\": \"%s\"}`, g.path(".py"))
	}
	fmt.Fprintf(g.b, `{"role": "assistant", "tool_calls": [{"id": "%s", "type": "function", "function": {"name": "%s", "arguments": "%s"}}]}`+"\n",
		id, tool, args)
	fmt.Fprintf(g.b, `{"role": "tool", "tool_call_id": "%s", "content": "%s: %d lines, %s"}`+"\n",
		id, g.path(".py"), 20+g.r.IntN(900), strings.ToLower(g.sentence()))
}
